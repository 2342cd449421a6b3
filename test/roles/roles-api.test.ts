// The admin API's catalogues and mappings: the environment's roles and an organization's own (its GET
// answers the whole catalogue with each entry's scope), entitlements alike without priority, values
// unique, a role in use refused removal with 409 naming the mappings, a mapping or default outside
// the catalogue refused with 400 naming it, and the audit entries.
import { beforeAll, describe, expect, it } from 'vitest';
import { createGroup, unique } from '../helpers/groups.js';
import { type Harness, type Tenant, useHarness } from '../helpers/harness.js';
import { expectAdminError, USER } from '../helpers/scim.js';

let harness: Harness;
let t: Tenant;
useHarness(async (h) => {
  harness = h;
  const org = await h.createOrg({ name: 'Roles API', groupSync: true });
  t = await h.tenantOf(org.id, await h.createToken(org.id));
});

const put = (path: string, body: unknown) => harness.admin('put', path).send(body as object);
const get = (path: string) => harness.admin('get', path);

describe('catalogues', () => {
  beforeAll(async () => {
    await put('/roles', {
      roles: [
        { value: 'member', displayName: 'Member', description: 'Reads', priority: 1 },
        { value: 'owner', displayName: 'Owner', priority: 100 },
      ],
    }).expect(200);
  });

  it("answers the environment's roles, and an organization's whole catalogue with scopes", async () => {
    expect((await get('/roles').expect(200)).body).toEqual({
      roles: [
        { value: 'member', displayName: 'Member', description: 'Reads', priority: 1, scope: 'environment' },
        { value: 'owner', displayName: 'Owner', description: '', priority: 100, scope: 'environment' },
      ],
    });
    const own = await put(`/orgs/${t.orgId}/roles`, { roles: [{ value: 'auditor', priority: 5 }] }).expect(
      200,
    );
    expect(own.body.roles).toEqual([
      { value: 'member', displayName: 'Member', description: 'Reads', priority: 1, scope: 'environment' },
      { value: 'owner', displayName: 'Owner', description: '', priority: 100, scope: 'environment' },
      { value: 'auditor', displayName: 'auditor', description: '', priority: 5, scope: 'organization' },
    ]);
    expect((await get(`/orgs/${t.orgId}/roles`).expect(200)).body).toEqual(own.body);
  });

  it('keeps entitlements alike, without priority', async () => {
    await put('/entitlements', { entitlements: [{ value: 'export' }] }).expect(200);
    const res = await put(`/orgs/${t.orgId}/entitlements`, {
      entitlements: [{ value: 'sso-admin', displayName: 'SSO admin' }],
    }).expect(200);
    expect(res.body).toEqual({
      entitlements: [
        { value: 'export', displayName: 'export', description: '', scope: 'environment' },
        { value: 'sso-admin', displayName: 'SSO admin', description: '', scope: 'organization' },
      ],
    });
    const refused = await put('/entitlements', { entitlements: [{ value: 'x', priority: 1 }] });
    expectAdminError(refused, 400, 'invalid_request');
    expect(refused.body.error.message).toMatch(/priority/);
  });

  it('refuses values given twice, or repeating the environment, and bad bodies', async () => {
    const twice = await put(`/orgs/${t.orgId}/roles`, { roles: [{ value: 'a' }, { value: 'A' }] });
    expectAdminError(twice, 400, 'invalid_request');
    expect(twice.body.error.message).toContain('"A"');
    const repeated = await put(`/orgs/${t.orgId}/roles`, { roles: [{ value: 'Owner' }] });
    expectAdminError(repeated, 400, 'invalid_request');
    expect(repeated.body.error.message).toMatch(/environment.*"Owner"/);
    const clash = await put('/roles', {
      roles: [{ value: 'auditor' }, { value: 'member' }, { value: 'owner' }],
    });
    expectAdminError(clash, 409, 'conflict');
    expect(clash.body.error.message).toContain(t.orgId);
    expectAdminError(await put('/roles', { roles: [{ value: '' }] }), 400, 'invalid_request');
    expectAdminError(await put('/roles', { roles: [{ value: 'x', priority: 1.5 }] }), 400, 'invalid_request');
    expectAdminError(await put('/roles', {}), 400, 'invalid_request');
    expectAdminError(await get('/orgs/00000000-0000-4000-8000-000000000000/roles'), 404, 'not_found');
  });
});

describe('role mappings', () => {
  it('answers none at first, and what was put, with roles as the catalogue spells them', async () => {
    expect((await get(`/orgs/${t.orgId}/role-mappings`).expect(200)).body).toEqual({
      mappings: [],
      defaultRole: null,
      mode: 'multiple',
    });
    const group = await createGroup(t, { displayName: unique('Auditors') });
    const body = {
      mappings: [
        { group: { id: group.id }, role: 'AUDITOR' },
        { group: { displayName: 'Owners (not yet here)' }, role: 'owner' },
      ],
      defaultRole: 'member',
      mode: 'single',
    };
    const expected = {
      mappings: [
        { group: { id: group.id }, role: 'auditor' },
        { group: { displayName: 'Owners (not yet here)' }, role: 'owner' },
      ],
      defaultRole: 'member',
      mode: 'single',
    };
    expect((await put(`/orgs/${t.orgId}/role-mappings`, body).expect(200)).body).toEqual(expected);
    expect((await get(`/orgs/${t.orgId}/role-mappings`).expect(200)).body).toEqual(expected);
  });

  it('refuses a role outside the catalogue and a group id the organization lacks, naming them', async () => {
    const outside = await put(`/orgs/${t.orgId}/role-mappings`, {
      mappings: [{ group: { displayName: 'Eng' }, role: 'superuser' }],
      defaultRole: 'nobody',
      mode: 'multiple',
    });
    expectAdminError(outside, 400, 'invalid_request');
    expect(outside.body.error.message).toContain('"superuser", "nobody"');
    const missing = await put(`/orgs/${t.orgId}/role-mappings`, {
      mappings: [{ group: { id: '00000000-0000-4000-8000-000000000000' }, role: 'owner' }],
      mode: 'multiple',
    });
    expectAdminError(missing, 400, 'invalid_request');
    expect(missing.body.error.message).toContain('00000000-0000-4000-8000-000000000000');
    const both = await put(`/orgs/${t.orgId}/role-mappings`, {
      mappings: [{ group: { id: '00000000-0000-4000-8000-000000000000', displayName: 'x' }, role: 'owner' }],
    });
    expectAdminError(both, 400, 'invalid_request');
    expectAdminError(
      await put(`/orgs/${t.orgId}/role-mappings`, { mappings: [], mode: 'some' }),
      400,
      'invalid_request',
    );
  });

  it('refuses to remove a role a mapping or the default uses, naming them (409)', async () => {
    const fromOrg = await put(`/orgs/${t.orgId}/roles`, { roles: [] });
    expectAdminError(fromOrg, 409, 'conflict');
    expect(fromOrg.body.error.message).toMatch(/group [0-9a-f-]{36} → auditor/);
    const fromEnvironment = await put('/roles', { roles: [{ value: 'member' }] });
    expectAdminError(fromEnvironment, 409, 'conflict');
    expect(fromEnvironment.body.error.message).toContain(
      `organization ${t.orgId}: group "Owners (not yet here)" (by displayName) → owner`,
    );
    const fromDefault = await put('/roles', { roles: [{ value: 'owner' }] });
    expect(fromDefault.body.error.message).toContain(`organization ${t.orgId}: default role member`);
    // Unmapped first, then removable.
    await put(`/orgs/${t.orgId}/role-mappings`, { mappings: [], mode: 'multiple' }).expect(200);
    await put(`/orgs/${t.orgId}/roles`, { roles: [] }).expect(200);
  });

  it("answers a user's effective roles and records every change in the audit log", async () => {
    const user = await t.post('/Users', {
      schemas: [USER],
      userName: unique('u'),
      roles: [{ value: 'owner' }],
    });
    expect(user.status, user.text).toBe(201);
    expect((await get(`/orgs/${t.orgId}/users/${user.body.id}/roles`).expect(200)).body).toEqual({
      roles: [{ value: 'owner', sources: ['idp'] }],
      entitlements: [],
    });
    const events = (await get(`/orgs/${t.orgId}/events?limit=100`).expect(200)).body.events;
    const actions = events.map((e: { action: string; status: number }) => `${e.action} ${e.status}`);
    expect(actions).toEqual(
      expect.arrayContaining([
        'roles.put 200',
        'roles.put 400',
        'role_mappings.put 200',
        'role_mappings.put 400',
        'entitlements.put 200',
      ]),
    );
  });
});
