// uniqueness: server on an organization's own User attribute: one user per value in the organization,
// under concurrent writes too; a schema change to it is refused over duplicates.
import { describe, expect, it } from 'vitest';
import { type Harness, type Tenant, useHarness } from '../helpers/harness.js';
import { expectScimError, patchOp, USER } from '../helpers/scim.js';

const URN = 'urn:ietf:params:scim:schemas:extension:acme:2.0:User';
const unique = (caseExact = false) => ({
  id: URN,
  attributes: [
    { name: 'employeeId', type: 'string', uniqueness: 'server', caseExact },
    { name: 'badge', type: 'integer', uniqueness: 'server' },
  ],
});
const user = (userName: string, extension: Record<string, unknown>) => ({
  schemas: [USER, URN],
  userName,
  [URN]: extension,
});

let harness: Harness;
let t: Tenant;
useHarness(async (h) => {
  harness = h;
  t = await h.tenant();
  await h.admin('put', `/orgs/${t.orgId}/schemas/${URN}`).send(unique()).expect(201);
});

describe('a unique custom attribute', () => {
  it('refuses a value another user holds, whatever its case, on POST, PUT and PATCH', async () => {
    const a = await t.post('/Users', user('a@acme.example', { employeeId: 'E-1', badge: 7 })).expect(201);
    expectScimError(await t.post('/Users', user('b@acme.example', { employeeId: 'e-1' })), 409, 'uniqueness');
    expectScimError(await t.post('/Users', user('b@acme.example', { badge: 7 })), 409, 'uniqueness');
    const b = await t.post('/Users', user('b@acme.example', { employeeId: 'E-2', badge: 8 })).expect(201);
    const refused = await t.put(`/Users/${b.body.id}`, user('b@acme.example', { employeeId: 'E-1' }));
    expectScimError(refused, 409, 'uniqueness');
    expect(refused.body.detail).toMatch(/employeeId/);
    expectScimError(
      await t.patch(
        `/Users/${b.body.id}`,
        patchOp({ op: 'replace', path: `${URN}:employeeId`, value: 'E-1' }),
      ),
      409,
      'uniqueness',
    );
    // A user keeps its own value, and a deprovisioned user's value is free again.
    await t.put(`/Users/${a.body.id}`, user('a@acme.example', { employeeId: 'E-1', badge: 7 })).expect(200);
    await t.delete(`/Users/${a.body.id}`).expect(204);
    await t
      .patch(`/Users/${b.body.id}`, patchOp({ op: 'replace', path: `${URN}:employeeId`, value: 'E-1' }))
      .expect(200);
  });

  it('goes to one of many concurrent writers', async () => {
    const statuses = await Promise.all(
      Array.from({ length: 12 }, (_, n) =>
        t.post('/Users', user(`racer${n}@acme.example`, { employeeId: 'E-RACE' })).then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(11);
  });
});

describe('making an attribute unique', () => {
  it('is refused while users share a value, with their count', async () => {
    const other = await harness.tenant();
    const loose = { id: URN, attributes: [{ name: 'employeeId', type: 'string' }] };
    await harness.admin('put', `/orgs/${other.orgId}/schemas/${URN}`).send(loose).expect(201);
    for (const [name, id] of [
      ['c', 'x-1'],
      ['d', 'X-1'],
      ['e', 'y-1'],
    ])
      await other.post('/Users', user(`${name}@acme.example`, { employeeId: id })).expect(201);
    const refused = await harness
      .admin('put', `/orgs/${other.orgId}/schemas/${URN}`)
      .send(unique())
      .expect(409);
    expect(refused.body.error.message).toBe(
      'employeeId: 2 users share a value with another; make them unique first',
    );
    // Compared exactly, the two values differ.
    await harness.admin('put', `/orgs/${other.orgId}/schemas/${URN}`).send(unique(true)).expect(200);
  });
});

describe('a unique custom attribute of groups', () => {
  it('refuses a value another group holds on POST, PUT and PATCH', async () => {
    const org = await harness.createOrg({ name: 'Unique groups', groupSync: true });
    const g: Tenant = await harness.tenantOf(org.id, await harness.createToken(org.id));
    const urn = 'urn:ietf:params:scim:schemas:extension:acme:2.0:Group';
    await harness
      .admin('put', `/orgs/${org.id}/schemas/${urn}`)
      .send({ id: urn, attributes: [{ name: 'code', type: 'string', uniqueness: 'server' }] })
      .expect(201);
    const group = (displayName: string, code: string) => ({
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group', urn],
      displayName,
      [urn]: { code },
    });
    await g.post('/Groups', group('Ops', 'OPS')).expect(201);
    expectScimError(await g.post('/Groups', group('Ops 2', 'ops')), 409, 'uniqueness');
    const sales = await g.post('/Groups', group('Sales', 'SAL')).expect(201);
    expectScimError(await g.put(`/Groups/${sales.body.id}`, group('Sales', 'OPS')), 409, 'uniqueness');
    expectScimError(
      await g.patch(
        `/Groups/${sales.body.id}`,
        patchOp({ op: 'replace', path: `${urn}:code`, value: 'Ops' }),
      ),
      409,
      'uniqueness',
    );
    await g.put(`/Groups/${sales.body.id}`, group('Sales', 'SAL')).expect(200);
  });
});
