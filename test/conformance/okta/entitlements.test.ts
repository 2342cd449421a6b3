// Okta Identity Governance's discovery of a SCIM app with entitlements ("Build a SCIM 2.0 server with
// entitlements"), against a live scimd whose organization has a catalogue: /ResourceTypes, /Schemas
// for the types' URNs, every value of each Role and Entitlement endpoint page by page, the import of
// users with their roles and entitlements, then assignments pushed by PUT as Okta's client sends them.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { LIVE_ADMIN_TOKEN, type LiveResponse, useLiveServer } from '../live-server.js';
import { CLIENT_HEADERS, CLIENT_WRITE_HEADERS, LIST, SCIM_ERROR, USER } from './okta.js';

const live = useLiveServer();

// biome-ignore lint/suspicious/noExplicitAny: response bodies are JSON
type Json = any;

const ROLE = 'urn:ietf:params:scim:schemas:core:2.0:Role';
const ENTITLEMENT = 'urn:ietf:params:scim:schemas:core:2.0:Entitlement';

const ROLES = [
  { value: 'admin', displayName: 'Administrator', description: 'Everything' },
  { value: 'editor', displayName: 'Editor', description: '' },
  { value: 'viewer', displayName: 'Viewer', description: 'Reads only' },
];
const ENTITLEMENTS = [
  { value: 'reports.export', displayName: 'Export reports', description: '' },
  { value: 'seats.pro', displayName: 'Pro seat', description: '' },
];

let tenant: Awaited<ReturnType<typeof live.newTenant>>;
const read = (path: string) => live.scim('GET', path, { headers: CLIENT_HEADERS, tenant });
const write = (method: string, path: string, body: unknown) =>
  live.scim(method, path, { headers: CLIENT_WRITE_HEADERS, body, tenant });

function ok(res: LiveResponse, status = 200): Json {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('content-type')).toBe('application/scim+json');
  return res.body;
}

/** Every resource of a list endpoint, as Okta reads one: startIndex and count until totalResults. */
async function readAll(endpoint: string, count: number): Promise<Json[]> {
  const all: Json[] = [];
  for (let startIndex = 1; ; startIndex += count) {
    const page = ok(await read(`${endpoint}?startIndex=${startIndex}&count=${count}`));
    expect(page.schemas).toEqual([LIST]);
    expect(page.startIndex).toBe(startIndex);
    all.push(...page.Resources);
    if (page.Resources.length === 0 || all.length >= page.totalResults) return all;
  }
}

/** The organization's own catalogue of a kind, as the operator sets it with the admin API. */
async function catalogue(kind: 'roles' | 'entitlements', entries: unknown[]) {
  const res = await fetch(`${live.root}/admin/v1/orgs/${tenant.orgId}/${kind}`, {
    method: 'PUT',
    headers: { Authorization: `Bearer ${LIVE_ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ [kind]: entries }),
  });
  expect(res.status, await res.text()).toBe(200);
}

beforeAll(async () => {
  tenant = await live.newTenant();
  await catalogue('roles', ROLES);
  await catalogue('entitlements', ENTITLEMENTS);
});

describe('Okta Identity Governance', () => {
  it('discovers the resource types, their schemas, and every role and entitlement', async () => {
    // 1. /ResourceTypes: the users' type and one type per kind of entitlement, each with its endpoint.
    const types = ok(await read('/ResourceTypes'));
    expect(types.schemas).toEqual([LIST]);
    const byId = Object.fromEntries(types.Resources.map((t: Json) => [t.id, t]));
    expect(byId.User).toMatchObject({ endpoint: '/Users', schema: USER });
    expect(byId.Role).toMatchObject({ name: 'Role', endpoint: '/Roles', schema: ROLE, schemaExtensions: [] });
    expect(byId.Entitlement).toMatchObject({ endpoint: '/Entitlements', schema: ENTITLEMENT });

    // 2. /Schemas: one for every URN the types name.
    const schemas = ok(await read('/Schemas'));
    const urns = new Set(schemas.Resources.map((s: Json) => s.id));
    for (const type of types.Resources) {
      expect(urns.has(type.schema), type.schema).toBe(true);
      for (const extension of type.schemaExtensions) expect(urns.has(extension.schema)).toBe(true);
    }
    const role = schemas.Resources.find((s: Json) => s.id === ROLE);
    expect(role.attributes.map((a: Json) => a.name)).toEqual(expect.arrayContaining(['value', 'display']));

    // 3. Each type's endpoint, page by page: the id and display name Okta's settings map.
    const roles = await readAll(byId.Role.endpoint, 2);
    expect(roles.map((r) => [r.value, r.display])).toEqual(ROLES.map((r) => [r.value, r.displayName]));
    for (const r of roles) {
      expect(r).toMatchObject({ schemas: [ROLE], supported: true, meta: { resourceType: 'Role' } });
      expect(ok(await read(`/Roles/${r.id}`))).toEqual(r);
    }
    expect(roles.find((r) => r.value === 'viewer').description).toBe('Reads only');
    const entitlements = await readAll(byId.Entitlement.endpoint, 100);
    expect(entitlements.map((e) => e.value)).toEqual(['reports.export', 'seats.pro']);
  });

  it('imports users with their roles and entitlements, and pushes assignments by PUT', async () => {
    const userName = `oig.${randomUUID().slice(0, 8)}@atko.example`;
    const base = {
      schemas: [USER],
      userName,
      name: { givenName: 'Oig', familyName: 'User' },
      emails: [{ primary: true, value: userName, type: 'work' }],
      displayName: 'Oig User',
      active: true,
    };
    const created = ok(
      await write('POST', '/Users', { ...base, roles: [{ value: 'viewer', display: 'Viewer' }] }),
      201,
    );

    // The import reads every user with what it holds.
    const users = ok(await read('/Users?startIndex=1&count=100'));
    const imported = users.Resources.find((u: Json) => u.id === created.id);
    expect(imported.roles).toEqual([{ value: 'viewer', display: 'Viewer' }]);

    // An admin grants a role and an entitlement in the Governance tab: Okta PUTs the whole user.
    const granted = ok(
      await write('PUT', `/Users/${created.id}`, {
        ...base,
        id: created.id,
        roles: [
          { value: 'viewer', display: 'Viewer' },
          { value: 'editor', display: 'Editor' },
        ],
        entitlements: [{ value: 'seats.pro', display: 'Pro seat', type: 'Entitlement' }],
      }),
    );
    expect(granted.roles.map((r: Json) => r.value)).toEqual(['viewer', 'editor']);
    expect(granted.entitlements).toEqual([{ value: 'seats.pro', display: 'Pro seat', type: 'Entitlement' }]);
    expect(ok(await read(`/Users/${created.id}`))).toEqual(granted);
    // What the product reads: the assignments, each from the IdP.
    const effective = await fetch(`${live.root}/admin/v1/orgs/${tenant.orgId}/users/${created.id}/roles`, {
      headers: { Authorization: `Bearer ${LIVE_ADMIN_TOKEN}` },
    });
    expect(await effective.json()).toEqual({
      roles: [
        { value: 'editor', sources: ['idp'] },
        { value: 'viewer', sources: ['idp'] },
      ],
      entitlements: [{ value: 'seats.pro', sources: ['idp'] }],
    });

    // A value the app never offered: a 400 Okta shows its admin, naming what the app takes.
    const refused = await write('PUT', `/Users/${created.id}`, { ...base, roles: [{ value: 'owner' }] });
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body).toMatchObject({ schemas: [SCIM_ERROR], status: '400', scimType: 'invalidValue' });
    expect(refused.body.detail).toMatch(
      /"owner" is not in this organization's catalogue.*"admin", "editor", "viewer"/,
    );
  });
});
