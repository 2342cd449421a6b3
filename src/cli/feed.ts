// The command line's change feed and the read-only API keys that read it.
import { type Api, adminClient, UsageError } from './admin-client.js';
import type { Command } from './command.js';
import { details, type Io, print, secretNotice, table } from './output.js';

interface ChangePage {
  changes: Record<string, unknown>[];
  nextCursor: string;
}

const CHANGE_COLUMNS = ['cursor', 'occurredAt', 'type', 'orgId', 'resourceId', 'changedAttributes'];
const API_KEY_COLUMNS = ['id', 'name', 'prefix', 'createdAt', 'lastUsedAt', 'revokedAt'];
/** How long one request of --follow waits for a change. */
const FOLLOW_WAIT_SECONDS = 25;

/** The feed is read with SCIMD_API_KEY when set: the product's key, not the admin token. */
function feedClient(io: Io): Api {
  return io.env.SCIMD_API_KEY
    ? adminClient({ ...io.env, SCIMD_ADMIN_TOKEN: io.env.SCIMD_API_KEY })
    : adminClient(io.env);
}

export const FEED_COMMANDS: Record<string, Command> = {
  changes: {
    usage: 'scimd changes [--org ORG_ID] [--after CURSOR] [--types T1,T2] [--follow]',
    summary: 'Print the change feed from a cursor; --follow keeps printing changes as they arrive',
    options: {
      org: { type: 'string' },
      after: { type: 'string' },
      types: { type: 'string' },
      follow: { type: 'boolean' },
    },
    async run({ values, io, json }) {
      const api = feedClient(io);
      const query = (after: string | undefined, wait: number) => {
        const q = new URLSearchParams({ limit: '1000' });
        if (after !== undefined) q.set('after', after);
        if (typeof values.org === 'string') q.set('orgId', values.org);
        if (typeof values.types === 'string') q.set('types', values.types);
        if (wait > 0) q.set('wait', String(wait));
        return `/changes?${q}`;
      };
      let after = typeof values.after === 'string' ? values.after : undefined;
      if (!values.follow) {
        const changes: Record<string, unknown>[] = [];
        for (;;) {
          const page = (await api.call('GET', query(after, 0))) as ChangePage;
          changes.push(...page.changes);
          const done = page.nextCursor === after;
          after = page.nextCursor;
          if (done) break;
        }
        print(
          io,
          json,
          { changes, nextCursor: after },
          () => `${table(changes, CHANGE_COLUMNS)}\nnext: --after ${after}\n`,
        );
        return;
      }
      // One line per change: JSON lines with --json, table rows otherwise.
      if (!json)
        io.out(
          table([Object.fromEntries(CHANGE_COLUMNS.map((c) => [c, c]))], CHANGE_COLUMNS).split('\n')[0] +
            '\n',
        );
      while (!io.signal?.aborted) {
        let page: ChangePage;
        try {
          page = (await api.call(
            'GET',
            query(after, FOLLOW_WAIT_SECONDS),
            undefined,
            io.signal,
          )) as ChangePage;
        } catch (error) {
          if (io.signal?.aborted) return;
          throw error;
        }
        for (const change of page.changes) {
          io.out(json ? `${JSON.stringify(change)}\n` : changeLine(change));
        }
        after = page.nextCursor;
      }
    },
  },
  'api-key create': {
    usage: 'scimd api-key create --name NAME',
    summary: 'Issue a read-only API key for the product (reads the change feed only); shown once',
    options: { name: { type: 'string' } },
    async run({ values, api, io, json }) {
      if (!values.name) throw new UsageError('--name is required');
      const key = (await api.call('POST', '/api-keys', { name: values.name })) as { key: string } & Record<
        string,
        unknown
      >;
      print(io, json, key, () => {
        const { key: secret, ...shown } = key;
        return (
          details(shown) +
          secretNotice(
            { token: secret },
            'Give it to the product: it reads GET /admin/v1/changes with it as the bearer token.',
          )
        );
      });
    },
  },
  'api-key list': {
    usage: 'scimd api-key list',
    summary: 'List API keys (never their secrets)',
    async run({ api, io, json }) {
      const { apiKeys } = (await api.call('GET', '/api-keys')) as { apiKeys: Record<string, unknown>[] };
      print(io, json, { apiKeys }, () => table(apiKeys, API_KEY_COLUMNS));
    },
  },
  'api-key revoke': {
    usage: 'scimd api-key revoke KEY_ID',
    summary: 'Revoke an API key: it stops working at once',
    positionals: ['KEY_ID'],
    async run({ positionals, api, io, json }) {
      const key = (await api.call(
        'POST',
        `/api-keys/${encodeURIComponent(positionals[0]!)}/revoke`,
        {},
      )) as Record<string, unknown>;
      print(io, json, key, () => details(key));
    },
  },
};

/** A change as one row of the table `changes` prints. */
function changeLine(change: Record<string, unknown>): string {
  const cell = (v: unknown) =>
    v === undefined || v === null ? '-' : Array.isArray(v) ? v.join(',') : String(v);
  return `${CHANGE_COLUMNS.map((c) => cell(change[c])).join('  ')}\n`;
}
