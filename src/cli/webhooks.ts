// The command line's webhook endpoints: create, list, change, delete, rotate, the delivery log,
// redelivery and a test ping.
import { UsageError } from './admin-client.js';
import type { Command, Values } from './command.js';
import { details, print, secretNotice, table } from './output.js';

const WEBHOOK_COLUMNS = ['id', 'state', 'url', 'events', 'orgId', 'description'];
const DELIVERY_COLUMNS = [
  'position',
  'type',
  'resourceId',
  'state',
  'attempts',
  'lastStatus',
  'lastLatencyMs',
  'lastError',
  'nextAttemptAt',
];
const SIGNING = 'Give it to the receiver: it checks X-Scimd-Signature (or webhook-signature) with it.';
const ROTATED = `${SIGNING} The old secret signs nothing sent from now on.`;

const list = (value: string | boolean | undefined) =>
  typeof value === 'string'
    ? value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : undefined;

function endpointBody(values: Values) {
  const active = values.active;
  if (active !== undefined && active !== 'true' && active !== 'false')
    throw new UsageError('--active takes true or false');
  return {
    ...(typeof values.url === 'string' ? { url: values.url } : {}),
    ...(list(values.events) ? { events: list(values.events) } : {}),
    ...(typeof values.description === 'string' ? { description: values.description } : {}),
    ...(typeof values.org === 'string' ? { orgId: values.org } : {}),
    ...(active !== undefined ? { active: active === 'true' } : {}),
  };
}

const id = (positionals: string[]) => encodeURIComponent(positionals[0]!);

export const WEBHOOK_COMMANDS: Record<string, Command> = {
  'webhook create': {
    usage: 'scimd webhook create --url URL --events T1,T2 [--description TEXT] [--org ORG_ID]',
    summary:
      'Register a webhook endpoint for changes (all organizations, or one); its signing secret is shown once',
    options: {
      url: { type: 'string' },
      events: { type: 'string' },
      description: { type: 'string' },
      org: { type: 'string' },
    },
    async run({ values, api, io, json }) {
      if (!values.url || !values.events) throw new UsageError('--url and --events are required');
      const created = (await api.call('POST', '/webhooks', endpointBody(values))) as {
        secret: string;
      } & Record<string, unknown>;
      print(io, json, created, () => {
        const { secret, ...shown } = created;
        return details(shown) + secretNotice({ token: secret }, SIGNING, 'it encrypted');
      });
    },
  },
  'webhook list': {
    usage: 'scimd webhook list',
    summary: 'List webhook endpoints (never their secrets)',
    async run({ api, io, json }) {
      const { webhooks } = (await api.call('GET', '/webhooks')) as { webhooks: Record<string, unknown>[] };
      print(io, json, { webhooks }, () => table(webhooks, WEBHOOK_COLUMNS));
    },
  },
  'webhook events': {
    usage: 'scimd webhook events',
    summary: 'List the change types an endpoint may subscribe to',
    async run({ api, io, json }) {
      const result = (await api.call('GET', '/webhooks/events')) as { events: string[] };
      print(io, json, result, () => `${result.events.join('\n')}\n`);
    },
  },
  'webhook update': {
    usage:
      'scimd webhook update WEBHOOK_ID [--url URL] [--events T1,T2] [--description TEXT] [--active true|false]',
    summary:
      'Change an endpoint; --active false holds its deliveries, --active true resumes them (a disabled one too)',
    options: {
      url: { type: 'string' },
      events: { type: 'string' },
      description: { type: 'string' },
      active: { type: 'string' },
    },
    positionals: ['WEBHOOK_ID'],
    async run({ values, positionals, api, io, json }) {
      const body = endpointBody(values);
      if (Object.keys(body).length === 0)
        throw new UsageError('Give --url, --events, --description or --active');
      const endpoint = (await api.call('PATCH', `/webhooks/${id(positionals)}`, body)) as Record<
        string,
        unknown
      >;
      print(io, json, endpoint, () => details(endpoint));
    },
  },
  'webhook delete': {
    usage: 'scimd webhook delete WEBHOOK_ID --yes',
    summary: 'Delete an endpoint with its deliveries',
    options: { yes: { type: 'boolean' } },
    positionals: ['WEBHOOK_ID'],
    async run({ values, positionals, api, io, json }) {
      if (!values.yes)
        throw new UsageError('This deletes the endpoint and its undelivered changes; add --yes to confirm');
      await api.call('DELETE', `/webhooks/${id(positionals)}`);
      print(io, json, { deleted: positionals[0] }, () => `deleted ${positionals[0]}\n`);
    },
  },
  'webhook rotate-secret': {
    usage: 'scimd webhook rotate-secret WEBHOOK_ID',
    summary: 'Issue a new signing secret, shown once; deliveries are signed with it from now on',
    positionals: ['WEBHOOK_ID'],
    async run({ positionals, api, io, json }) {
      const rotated = (await api.call('POST', `/webhooks/${id(positionals)}/rotate-secret`, {})) as {
        secret: string;
      } & Record<string, unknown>;
      print(io, json, rotated, () => {
        const { secret, ...shown } = rotated;
        return details(shown) + secretNotice({ token: secret }, ROTATED, 'it encrypted');
      });
    },
  },
  'webhook deliveries': {
    usage:
      'scimd webhook deliveries WEBHOOK_ID [--state pending|delivered|expired] [--limit N] [--before POSITION]',
    summary: "An endpoint's delivery log, newest first: attempts, status, latency, error, next attempt",
    options: { state: { type: 'string' }, limit: { type: 'string' }, before: { type: 'string' } },
    positionals: ['WEBHOOK_ID'],
    async run({ values, positionals, api, io, json }) {
      const query = new URLSearchParams();
      for (const name of ['state', 'limit', 'before'] as const) {
        const value = values[name];
        if (typeof value === 'string') query.set(name, value);
      }
      const result = (await api.call(
        'GET',
        `/webhooks/${id(positionals)}/deliveries${query.size ? `?${query}` : ''}`,
      )) as {
        deliveries: Record<string, unknown>[];
        nextCursor: string | null;
      };
      print(
        io,
        json,
        result,
        () =>
          table(result.deliveries, DELIVERY_COLUMNS) +
          (result.nextCursor ? `\nmore: --before ${result.nextCursor}\n` : ''),
      );
    },
  },
  'webhook redeliver': {
    usage: 'scimd webhook redeliver WEBHOOK_ID POSITION',
    summary: 'Send one delivery again now',
    positionals: ['WEBHOOK_ID', 'POSITION'],
    async run({ positionals, api, io, json }) {
      const delivery = (await api.call(
        'POST',
        `/webhooks/${id(positionals)}/deliveries/${encodeURIComponent(positionals[1]!)}/redeliver`,
        {},
      )) as Record<string, unknown>;
      print(io, json, delivery, () => details(delivery));
    },
  },
  'webhook ping': {
    usage: 'scimd webhook ping WEBHOOK_ID',
    summary: 'Send a signed webhook.ping to the endpoint now and show what it answered',
    positionals: ['WEBHOOK_ID'],
    async run({ positionals, api, io, json }) {
      const result = (await api.call('POST', `/webhooks/${id(positionals)}/ping`, {})) as Record<
        string,
        unknown
      >;
      print(io, json, result, () => details(result));
    },
  },
};
