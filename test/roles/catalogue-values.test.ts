// A User's roles and entitlements checked against its organization's catalogue over HTTP: any value
// while a catalogue is empty; otherwise a value outside it is a 400 invalidValue naming the allowed
// values, in the failed-request log with its hint. Entra's and Okta's forms of roles go through.
import { describe, expect, it } from 'vitest';
import { type CatalogueInput, replaceScopeCatalogue } from '../../src/roles/catalogue.repository.js';
import { type Harness, type Tenant, useHarness } from '../helpers/harness.js';
import { expectScimError, type Json, patchOp, USER } from '../helpers/scim.js';

let harness: Harness;
useHarness((h) => {
  harness = h;
});

const entry = (value: string): CatalogueInput => ({
  value,
  displayName: value,
  description: '',
  priority: 0,
});

async function catalogue(orgId: string, kind: 'roles' | 'entitlements', values: string[]) {
  await replaceScopeCatalogue(harness.database.db, orgId, kind, values.map(entry), new Date());
}

let names = 0;
const user = (extra: Json = {}) => ({
  schemas: [USER],
  userName: `user${++names}@example.com`,
  active: true,
  ...extra,
});
const appRole = (value: string) => ({
  primary: false,
  type: 'WindowsAzureActiveDirectoryRole',
  display: value,
  value,
});
const roleValues = (body: Json) => (body.roles ?? []).map((r: Json) => r.value);

async function withCatalogue(): Promise<Tenant> {
  const t = await harness.tenant();
  await catalogue(t.orgId, 'roles', ['Admin', 'Viewer']);
  await catalogue(t.orgId, 'entitlements', ['reports.export']);
  return t;
}

describe('while the catalogue is empty', () => {
  it('takes any roles and entitlements', async () => {
    const t = await harness.tenant();
    const res = await t
      .post('/Users', user({ roles: [appRole('anything')], entitlements: [{ value: 'whatever' }] }))
      .expect(201);
    expect(roleValues(res.body)).toEqual(['anything']);
    await t
      .patch(`/Users/${res.body.id}`, patchOp({ op: 'Add', path: 'roles', value: [appRole('more')] }))
      .expect(200);
  });
});

describe('with a catalogue', () => {
  it('refuses a role or an entitlement outside it on POST, naming the allowed values', async () => {
    const t = await withCatalogue();
    const res = await t.post('/Users', user({ roles: [appRole('Admin'), appRole('Owner')] }));
    expectScimError(res, 400, 'invalidValue');
    expect(res.body.detail).toMatch(/roles: "Owner" is not in this organization's catalogue/);
    expect(res.body.detail).toMatch(/allowed: "Admin", "Viewer"/);
    const ent = await t.post('/Users', user({ entitlements: [{ value: 'reports.delete' }] }));
    expectScimError(ent, 400, 'invalidValue');
    expect(ent.body.detail).toMatch(/entitlements: "reports.delete" .*allowed: "reports.export"/);

    // Values compare in any case, and are kept as sent.
    const created = await t
      .post('/Users', user({ roles: [appRole('admin')], entitlements: [{ value: 'REPORTS.EXPORT' }] }))
      .expect(201);
    expect(roleValues(created.body)).toEqual(['admin']);
  });

  it('takes Entra’s app role PATCHes: Add of a roles array, Remove by filter, Replace of the whole list', async () => {
    const t = await withCatalogue();
    const id = (await t.post('/Users', user({ roles: [] })).expect(201)).body.id;
    const added = await t
      .patch(
        `/Users/${id}`,
        patchOp({ op: 'Add', path: 'roles', value: [appRole('Admin'), appRole('Viewer')] }),
      )
      .expect(200);
    expect(added.body.roles).toEqual([appRole('Admin'), appRole('Viewer')]);

    const outside = await t.patch(
      `/Users/${id}`,
      patchOp({ op: 'Add', path: 'roles', value: [appRole('Owner')] }),
    );
    expectScimError(outside, 400, 'invalidValue');
    expect(outside.body.detail).toMatch(/"Owner"/);

    const removed = await t
      .patch(`/Users/${id}`, patchOp({ op: 'Remove', path: 'roles[value eq "Admin"]' }))
      .expect(200);
    expect(roleValues(removed.body)).toEqual(['Viewer']);

    const replaced = await t
      .patch(`/Users/${id}`, patchOp({ op: 'replace', path: 'roles', value: [appRole('Admin')] }))
      .expect(200);
    expect(roleValues(replaced.body)).toEqual(['Admin']);
    expectScimError(
      await t.patch(`/Users/${id}`, patchOp({ op: 'replace', value: { roles: [{ value: 'Owner' }] } })),
      400,
      'invalidValue',
    );
    expectScimError(
      await t.patch(`/Users/${id}`, patchOp({ op: 'add', path: 'entitlements', value: [{ value: 'x' }] })),
      400,
      'invalidValue',
    );
  });

  it('reads Entra’s app roles sent as JSON text in a PATCH value (no aadOptscim062020 flag)', async () => {
    const t = await withCatalogue();
    const id = (await t.post('/Users', user()).expect(201)).body.id;
    const text = (value: string) =>
      JSON.stringify({ id: '06b07648-ecfe-589f-9d2f-6325724a46ee', value, displayName: value });
    const res = await t
      .patch(`/Users/${id}`, patchOp({ op: 'Add', path: 'roles', value: [{ value: text('Viewer') }] }))
      .expect(200);
    expect(res.body.roles).toEqual([{ value: 'Viewer' }]);
    expectScimError(
      await t.patch(`/Users/${id}`, patchOp({ op: 'Add', path: 'roles', value: [{ value: text('Owner') }] })),
      400,
      'invalidValue',
    );
  });

  it('keeps a value the user already holds when the catalogue drops it, so other writes go through', async () => {
    const t = await withCatalogue();
    const body = user({ roles: [appRole('Admin')] });
    const id = (await t.post('/Users', body).expect(201)).body.id;
    await catalogue(t.orgId, 'roles', ['Viewer']);
    await t.patch(`/Users/${id}`, patchOp({ op: 'Replace', path: 'active', value: 'False' })).expect(200);
    await t.patch(`/Users/${id}`, patchOp({ op: 'replace', path: 'title', value: 'Lead' })).expect(200);
    // Entra adds the roles it assigns again on every cycle.
    await t
      .patch(`/Users/${id}`, patchOp({ op: 'Add', path: 'roles', value: [appRole('Admin')] }))
      .expect(200);
    await t.put(`/Users/${id}`, { ...body, displayName: 'Renamed' }).expect(200);
    // Another user cannot be given it.
    expectScimError(await t.post('/Users', user({ roles: [appRole('Admin')] })), 400, 'invalidValue');
    // A value it does not hold is still refused, on PUT as on PATCH.
    expectScimError(await t.put(`/Users/${id}`, { ...body, roles: [appRole('Owner')] }), 400, 'invalidValue');
  });

  it('shows the refusal in the failed-request log with a hint, without the values sent', async () => {
    const t = await withCatalogue();
    const res = await t.post('/Users', user({ roles: [appRole('secret-role-name')] }));
    expectScimError(res, 400, 'invalidValue');
    const health = (await harness.admin('get', `/orgs/${t.orgId}/health`).expect(200)).body;
    expect(health.recentFailures[0]).toMatchObject({
      method: 'POST',
      status: 400,
      scimType: 'invalidValue',
      hint: expect.stringMatching(/role or entitlement this service does not offer/),
    });
    expect(JSON.stringify(health)).not.toContain('secret-role-name');
  });
});
