// The command line's setup links: a link for a customer's IT admin to connect Okta or Entra alone.
import { UsageError } from './admin-client.js';
import type { Command } from './command.js';
import { details, print, table } from './output.js';

const LINK_COLUMNS = ['id', 'state', 'prefix', 'note', 'expiresAt', 'lastOpenedAt', 'createdBy'];

export const SETUP_LINK_COMMANDS: Record<string, Command> = {
  'setup-link create': {
    usage: 'scimd setup-link create ORG_ID [--hours N] [--note TEXT]',
    summary: 'Create a setup link for the customer’s IT admin (valid 72 hours unless --hours); shown once',
    options: { hours: { type: 'string' }, note: { type: 'string' } },
    positionals: ['ORG_ID'],
    async run({ values, positionals, api, io, json }) {
      let hours: number | undefined;
      if (values.hours !== undefined) {
        hours = Number(values.hours);
        if (!Number.isInteger(hours) || hours < 1)
          throw new UsageError('--hours takes a whole number of hours');
      }
      const body = {
        ...(hours !== undefined ? { expiresInHours: hours } : {}),
        ...(values.note !== undefined ? { note: values.note } : {}),
      };
      const link = (await api.call(
        'POST',
        `/orgs/${encodeURIComponent(positionals[0]!)}/setup-links`,
        body,
      )) as {
        url: string;
      } & Record<string, unknown>;
      print(io, json, link, () => {
        const { url, ...shown } = link;
        return `${details(shown)}\nLink (shown only now; scimd keeps its hash):\n\n  ${url}\n\nSend it to the customer’s IT admin: it opens the steps for Okta or Entra.\n`;
      });
    },
  },
  'setup-link list': {
    usage: 'scimd setup-link list ORG_ID',
    summary: "List an organization's setup links (never the links themselves)",
    positionals: ['ORG_ID'],
    async run({ positionals, api, io, json }) {
      const result = (await api.call('GET', `/orgs/${encodeURIComponent(positionals[0]!)}/setup-links`)) as {
        setupLinks: Record<string, unknown>[];
      };
      print(io, json, result, () => table(result.setupLinks, LINK_COLUMNS));
    },
  },
  'setup-link revoke': {
    usage: 'scimd setup-link revoke ORG_ID LINK_ID',
    summary: 'Revoke a setup link: it no longer opens, and pages opened from it stop working',
    positionals: ['ORG_ID', 'LINK_ID'],
    async run({ positionals, api, io, json }) {
      const [org, id] = positionals.map(encodeURIComponent);
      const link = (await api.call('POST', `/orgs/${org}/setup-links/${id}/revoke`, {})) as Record<
        string,
        unknown
      >;
      print(io, json, link, () => details(link));
    },
  },
};
