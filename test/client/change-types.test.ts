// The change and delivery types that `scimd` and `scimd/client` export, against what a live scimd
// sends: every type the server lists (GET /admin/v1/webhooks/events) has its member of the union, and
// every change read from the feed and every webhook delivery has the fields, and the kinds of value,
// that the member for its type declares.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { FeedClient } from '../../src/client/index.js';
import type { DeprovisioningMode as OrgDeprovisioningMode } from '../../src/db/tables.js';
import {
  CHANGE_TYPES,
  type Change,
  type ChangeOf,
  type ChangeType,
  type DeprovisioningMode,
  type DirectoryGroup,
  type DirectoryUser,
  type PingDelivery,
  verifyWebhook,
  type WebhookDelivery,
} from '../../src/receiver.js';
import { Events } from '../helpers/events.js';
import { readToEnd } from '../helpers/feed-client.js';
import { type LiveScimd, startLiveScimd } from '../helpers/live-scimd.js';
import { type RemoteTenant, remote } from '../helpers/remote.js';
import { ENTERPRISE, GROUP, patchOp, USER } from '../helpers/scim.js';

type KindOf<V> = [V] extends [string]
  ? 'string'
  : [V] extends [string | null]
    ? 'string or null'
    : [V] extends [boolean]
      ? 'boolean'
      : [V] extends [readonly string[]]
        ? 'string[]'
        : [V] extends [readonly object[]]
          ? 'object[]'
          : 'object';

/** Each field of T with the kind of its value, and `?` after an optional one's: T as a runtime check. */
type Shape<T> = {
  readonly [K in keyof T]-?: Pick<T, K> extends Required<Pick<T, K>>
    ? KindOf<T[K]>
    : `${KindOf<Exclude<T[K], undefined>>}?`;
};

const USER_ROW: Shape<DirectoryUser> = {
  org_id: 'string',
  id: 'string',
  external_id: 'string or null',
  user_name: 'string',
  active: 'boolean',
  deprovisioned: 'boolean',
  deprovisioned_at: 'string or null',
  display_name: 'string or null',
  given_name: 'string or null',
  family_name: 'string or null',
  primary_email: 'string or null',
  emails: 'string[]',
  title: 'string or null',
  department: 'string or null',
  manager_id: 'string or null',
  employee_number: 'string or null',
  attributes: 'object',
  created_at: 'string',
  updated_at: 'string',
};

const GROUP_ROW: Shape<DirectoryGroup> = {
  org_id: 'string',
  id: 'string',
  external_id: 'string or null',
  display_name: 'string',
  attributes: 'object',
  created_at: 'string',
  updated_at: 'string',
};

const MEMBERS = { userIds: 'string[]' } as const;
const ROLES_CHANGED = { roles: 'object[]', added: 'string[]', removed: 'string[]' } as const;
const ENTITLEMENTS_CHANGED = { entitlements: 'object[]', added: 'string[]', removed: 'string[]' } as const;

const FIELDS = {
  id: 'string',
  cursor: 'string',
  orgId: 'string',
  type: 'string',
  resourceType: 'string',
  resourceId: 'string',
  occurredAt: 'string',
  eventUri: 'string',
} as const;

const NO_EVENT = { ...FIELDS, eventUri: 'string or null' } as const;

interface Expected<C extends Change> {
  readonly resourceType: C['resourceType'];
  readonly eventUri: C['eventUri'];
  readonly fields: Shape<Omit<C, 'data'>>;
  readonly data: Shape<C['data']>;
}

const PROV = 'urn:ietf:params:scim:event:prov:';

/** What each type of change carries, as its member of the union declares it. */
const EXPECTED: { readonly [T in ChangeType]: Expected<ChangeOf<T>> } = {
  'user.created': { resourceType: 'User', eventUri: `${PROV}create:full`, fields: FIELDS, data: USER_ROW },
  'user.updated': {
    resourceType: 'User',
    eventUri: `${PROV}patch:full`,
    fields: { ...FIELDS, changedAttributes: 'string[]' },
    data: USER_ROW,
  },
  'user.deactivated': {
    resourceType: 'User',
    eventUri: `${PROV}deactivate`,
    fields: { ...FIELDS, changedAttributes: 'string[]' },
    data: USER_ROW,
  },
  'user.reactivated': {
    resourceType: 'User',
    eventUri: `${PROV}activate`,
    fields: { ...FIELDS, changedAttributes: 'string[]' },
    data: USER_ROW,
  },
  'user.deprovisioned': {
    resourceType: 'User',
    eventUri: `${PROV}delete`,
    fields: { ...FIELDS, mode: 'string', changedAttributes: 'string[]?' },
    data: USER_ROW,
  },
  'group.created': { resourceType: 'Group', eventUri: `${PROV}create:full`, fields: FIELDS, data: GROUP_ROW },
  'group.updated': {
    resourceType: 'Group',
    eventUri: `${PROV}patch:full`,
    fields: { ...FIELDS, changedAttributes: 'string[]' },
    data: GROUP_ROW,
  },
  'group.deleted': { resourceType: 'Group', eventUri: `${PROV}delete`, fields: FIELDS, data: GROUP_ROW },
  'group.members_added': {
    resourceType: 'Group',
    eventUri: `${PROV}patch:notice`,
    fields: FIELDS,
    data: MEMBERS,
  },
  'group.members_removed': {
    resourceType: 'Group',
    eventUri: `${PROV}patch:notice`,
    fields: FIELDS,
    data: MEMBERS,
  },
  'user.roles_changed': { resourceType: 'User', eventUri: null, fields: NO_EVENT, data: ROLES_CHANGED },
  'user.entitlements_changed': {
    resourceType: 'User',
    eventUri: null,
    fields: NO_EVENT,
    data: ENTITLEMENTS_CHANGED,
  },
  'role_mappings.updated': {
    resourceType: 'Org',
    eventUri: null,
    fields: NO_EVENT,
    data: { mappings: 'object[]', defaultRole: 'string or null', mode: 'string' },
  },
  'org.deleted': {
    resourceType: 'Org',
    eventUri: null,
    fields: { ...FIELDS, eventUri: 'string or null' },
    data: { id: 'string', name: 'string' },
  },
};

const DELIVERY = { id: 'string', type: 'string', timestamp: 'string', data: 'object' } as const;
const PING: Shape<PingDelivery['data']> = { webhookId: 'string' };

function fits(value: unknown, kind: string): boolean {
  const base = kind.replace(/\?$/, '');
  if (base === 'string or null') return value === null || typeof value === 'string';
  if (base === 'string[]') return Array.isArray(value) && value.every((v) => typeof v === 'string');
  if (base === 'object') return typeof value === 'object' && value !== null && !Array.isArray(value);
  if (base === 'object[]') return Array.isArray(value) && value.every((v) => fits(v, 'object'));
  return typeof value === base;
}

/** How `value` differs from `shape`: fields missing, of another kind, or not declared. */
function misfits(value: object, shape: Readonly<Record<string, string>>): string[] {
  const record = value as Record<string, unknown>;
  const problems: string[] = [];
  for (const [key, kind] of Object.entries(shape)) {
    if (!(key in record)) {
      if (!kind.endsWith('?')) problems.push(`${key} is missing`);
    } else if (!fits(record[key], kind)) {
      problems.push(`${key} is ${JSON.stringify(record[key])}, not ${kind}`);
    }
  }
  for (const key of Object.keys(record)) if (!(key in shape)) problems.push(`${key} is not declared`);
  return problems;
}

/** How a change differs from its type's member of the union. */
function changeMisfits(change: Change): string[] {
  const expected = EXPECTED[change.type];
  if (!expected) return [`${change.type} is not a type of the union`];
  const { data, ...fields } = change;
  return [
    ...(change.resourceType === expected.resourceType ? [] : [`resourceType is ${change.resourceType}`]),
    ...(change.eventUri === expected.eventUri ? [] : [`eventUri is ${change.eventUri}`]),
    ...misfits(fields, expected.fields),
    ...misfits(data, expected.data).map((problem) => `data.${problem}`),
  ].map((problem) => `${change.type} ${change.id}: ${problem}`);
}

interface Received {
  readonly raw: string;
  readonly headers: IncomingHttpHeaders;
}

let scimd: LiveScimd;
let feed: FeedClient;
let tenant: RemoteTenant;
let webhook: { id: string; secret: string };
const received = new Events<Received>();
let closeReceiver: () => Promise<void>;

beforeAll(async () => {
  scimd = await startLiveScimd({ WEBHOOKS_ALLOW_PRIVATE: 'true' });
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      res.writeHead(204).end();
      received.push({ raw: Buffer.concat(chunks).toString('utf8'), headers: req.headers });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closeReceiver = () => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  };
  const admin = remote(scimd.origin, scimd.adminToken);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  const created = await admin.admin('POST', '/webhooks', { url, events: [...CHANGE_TYPES] });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  webhook = created.body;
  const key = await admin.admin('POST', '/api-keys', { name: 'types' });
  feed = new FeedClient({ url: scimd.origin, apiKey: key.body.key });
  tenant = await admin.tenant('every change');
});
afterAll(async () => {
  await scimd?.close();
  await closeReceiver?.();
});

/** The deliveries received so far, each checked against its signature and parsed. */
function deliveries(): WebhookDelivery[] {
  return received.items.map(({ raw, headers }) => {
    const check = verifyWebhook(raw, headers, webhook.secret);
    if (!check.ok) throw new Error(`a delivery failed its check: ${check.reason}`);
    return check.delivery as WebhookDelivery;
  });
}

async function scim(method: string, path: string, body?: unknown): Promise<string | undefined> {
  const res = await tenant.scim(method, path, body);
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
  return res.body?.id;
}

describe('the change types', () => {
  it('name every type the server lists', async () => {
    expectTypeOf<Change['type']>().toEqualTypeOf<ChangeType>();
    expectTypeOf<WebhookDelivery['type']>().toEqualTypeOf<ChangeType | 'webhook.ping'>();
    expectTypeOf<DeprovisioningMode>().toEqualTypeOf<OrgDeprovisioningMode>();
    const listed = await remote(scimd.origin, scimd.adminToken).admin('GET', '/webhooks/events');
    expect(listed.status).toBe(200);
    expect([...listed.body.events].sort()).toEqual([...CHANGE_TYPES].sort());
  });

  it('describe each change the feed and the webhooks send, of every type', async () => {
    const { end: after } = await readToEnd(feed);
    // A catalogue and a mapping: the user's roles and entitlements, and the mapping, change too.
    const setup = remote(scimd.origin, scimd.adminToken);
    for (const [path, body] of [
      ['roles', { roles: [{ value: 'analyst' }, { value: 'engineer' }] }],
      ['entitlements', { entitlements: [{ value: 'reports' }] }],
      [
        'role-mappings',
        { mappings: [{ group: { displayName: 'Engines' }, role: 'engineer' }], mode: 'multiple' },
      ],
    ] as const) {
      const res = await setup.admin('PUT', `/orgs/${tenant.orgId}/${path}`, body);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    const user = {
      schemas: [USER, ENTERPRISE],
      userName: 'ada@acme.example',
      externalId: 'ada-1',
      name: { givenName: 'Ada', familyName: 'Lovelace' },
      emails: [{ value: 'ada@acme.example', primary: true }],
      title: 'Analyst',
      roles: [{ value: 'analyst' }],
      entitlements: [{ value: 'reports' }],
      [ENTERPRISE]: { department: 'Engines', employeeNumber: '1815' },
    };
    const ada = await scim('POST', '/Users', user);
    await scim('PATCH', `/Users/${ada}`, patchOp({ op: 'replace', path: 'title', value: 'Countess' }));
    await scim('PATCH', `/Users/${ada}`, patchOp({ op: 'replace', path: 'active', value: false }));
    await scim('PATCH', `/Users/${ada}`, patchOp({ op: 'replace', path: 'active', value: true }));
    const team = await scim('POST', '/Groups', {
      schemas: [GROUP],
      displayName: 'Engines',
      members: [{ value: ada }],
    });
    await scim(
      'PATCH',
      `/Groups/${team}`,
      patchOp({ op: 'replace', path: 'displayName', value: 'Analytical' }),
    );
    await scim('PATCH', `/Groups/${team}`, patchOp({ op: 'remove', path: `members[value eq "${ada}"]` }));
    await scim('DELETE', `/Groups/${team}`);
    // Deprovisioned in the organization's mode (deactivate), and in `delete` mode, where the row goes.
    await scim('DELETE', `/Users/${ada}`);
    const admin = remote(scimd.origin, scimd.adminToken);
    expect((await admin.admin('PATCH', `/orgs/${tenant.orgId}`, { deprovisioning: 'delete' })).status).toBe(
      200,
    );
    const grace = await scim('POST', '/Users', { schemas: [USER], userName: 'grace@acme.example' });
    await scim('DELETE', `/Users/${grace}`);
    const pinged = await admin.admin('POST', `/webhooks/${webhook.id}/ping`, {});
    expect(pinged.body).toMatchObject({ delivered: true });

    const { changes } = await readToEnd(feed, { after, orgId: tenant.orgId });
    // The organization's deletion removes its changes: its own comes last, read after them.
    await received.until(() =>
      changes.every((c) => deliveries().some((d) => d.type !== 'webhook.ping' && d.data.id === c.id)),
    );
    const lastCursor = changes.at(-1)!.cursor;
    expect((await admin.admin('DELETE', `/orgs/${tenant.orgId}`)).status).toBe(204);
    const { changes: deleted } = await feed.read({ after: lastCursor, types: ['org.deleted'] });
    expectTypeOf(deleted).toEqualTypeOf<readonly ChangeOf<'org.deleted'>[]>();
    expect(deleted.map((c) => c.data.id)).toEqual([tenant.orgId]);
    changes.push(...deleted);
    await received.until(() => deliveries().some((d) => d.type === 'org.deleted'));

    expect(new Set(changes.map((c) => c.type))).toEqual(new Set(CHANGE_TYPES));
    expect(changes.flatMap(changeMisfits)).toEqual([]);
    expect(
      changes.filter((c) => c.type === 'user.deprovisioned').map((c) => [c.mode, 'changedAttributes' in c]),
    ).toEqual([
      ['deactivate', true],
      ['delete', false],
    ]);

    const byId = new Map(changes.map((c) => [c.id, c]));
    for (const delivery of deliveries()) {
      expect(misfits(delivery, DELIVERY)).toEqual([]);
      if (delivery.type === 'webhook.ping') {
        expect(misfits(delivery.data, PING)).toEqual([]);
        expect(delivery.data.webhookId).toBe(webhook.id);
        continue;
      }
      expect(delivery.data).toEqual(byId.get(delivery.data.id));
      expect(delivery.type).toBe(delivery.data.type);
      expect(delivery.timestamp).toBe(delivery.data.occurredAt);
    }
    expect(new Set(deliveries().map((d) => d.type))).toEqual(new Set([...CHANGE_TYPES, 'webhook.ping']));
  });
});
