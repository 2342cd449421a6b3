// SCIM /Roles and /Entitlements over HTTP: an organization's catalogue as the draft's resources, listed,
// paged, filtered and read by id with any of its tokens; read-only; in /ResourceTypes and /Schemas
// only while the catalogue of its kind has entries; RolesAndEntitlements in /ServiceProviderConfig.
import { describe, expect, it } from 'vitest';
import { type CatalogueInput, replaceScopeCatalogue } from '../../src/roles/catalogue.repository.js';
import { type Harness, type Tenant, useHarness } from '../helpers/harness.js';
import { expectScimError, LIST, SCIM_JSON } from '../helpers/scim.js';

const ROLE = 'urn:ietf:params:scim:schemas:core:2.0:Role';
const ENTITLEMENT = 'urn:ietf:params:scim:schemas:core:2.0:Entitlement';

let harness: Harness;
useHarness((h) => {
  harness = h;
});

const entry = (value: string, displayName = value, description = ''): CatalogueInput => ({
  value,
  displayName,
  description,
  priority: 0,
});

async function catalogue(orgId: string | null, kind: 'roles' | 'entitlements', entries: CatalogueInput[]) {
  await replaceScopeCatalogue(harness.database.db, orgId, kind, entries, new Date());
}

const ROLES = [
  entry('viewer', 'Viewer', 'Reads everything'),
  entry('admin', 'Administrator'),
  entry('billing.manager', 'Billing manager'),
  entry('auditor', 'Auditor'),
];

async function withRoles(): Promise<Tenant> {
  const t = await harness.tenant();
  await catalogue(t.orgId, 'roles', ROLES);
  return t;
}

const values = (body: { Resources: { value: string }[] }) => body.Resources.map((r) => r.value);

describe('GET /Roles', () => {
  it('lists the catalogue as the draft’s Role resources, in value order, as a ListResponse', async () => {
    const t = await withRoles();
    const res = await t.get('/Roles').expect(200);
    expect(res.headers['content-type']).toBe(SCIM_JSON);
    expect(res.body).toMatchObject({ schemas: [LIST], totalResults: 4, startIndex: 1, itemsPerPage: 4 });
    expect(values(res.body)).toEqual(['admin', 'auditor', 'billing.manager', 'viewer']);
    const viewer = res.body.Resources[3];
    expect(viewer).toEqual({
      schemas: [ROLE],
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      value: 'viewer',
      display: 'Viewer',
      supported: true,
      description: 'Reads everything',
      meta: { resourceType: 'Role', location: `${t.baseUrl}/Roles/${viewer.id}` },
    });
    expect(res.body.Resources[0]).not.toHaveProperty('description');

    const one = await t.get(`/Roles/${viewer.id}`).expect(200);
    expect(one.body).toEqual(viewer);
    expect(one.headers['content-type']).toBe(SCIM_JSON);
  });

  it('pages by startIndex and count, and by cursor', async () => {
    const t = await withRoles();
    const page = await t.get('/Roles?startIndex=2&count=2').expect(200);
    expect(page.body).toMatchObject({ totalResults: 4, startIndex: 2, itemsPerPage: 2 });
    expect(values(page.body)).toEqual(['auditor', 'billing.manager']);
    const past = await t.get('/Roles?startIndex=9').expect(200);
    expect(past.body).toMatchObject({ totalResults: 4, startIndex: 9, itemsPerPage: 0, Resources: [] });

    const first = await t.get('/Roles?cursor&count=3').expect(200);
    expect(values(first.body)).toEqual(['admin', 'auditor', 'billing.manager']);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await t.get(`/Roles?cursor=${first.body.nextCursor}&count=3`).expect(200);
    expect(values(second.body)).toEqual(['viewer']);
    expect(second.body).not.toHaveProperty('nextCursor');
    expectScimError(await t.get('/Roles?cursor=not-one'), 400, 'invalidCursor');
  });

  it('filters on value and display (eq in any case, co, sw, and, or, not), and sorts', async () => {
    const t = await withRoles();
    const list = async (filter: string) =>
      values((await t.get(`/Roles?filter=${encodeURIComponent(filter)}`).expect(200)).body);
    expect(await list('value eq "ADMIN"')).toEqual(['admin']);
    expect(await list('display co "man"')).toEqual(['billing.manager']);
    expect(await list('display sw "a"')).toEqual(['admin', 'auditor']);
    expect(await list('value sw "a" and display ew "itor"')).toEqual(['auditor']);
    expect(await list('value eq "viewer" or value eq "admin"')).toEqual(['admin', 'viewer']);
    expect(await list('not (value sw "a")')).toEqual(['billing.manager', 'viewer']);
    expect(await list('description pr')).toEqual(['viewer']);
    expect(await list('description eq null')).toEqual(['admin', 'auditor', 'billing.manager']);
    expect(await list(`${ROLE}:value eq "auditor"`)).toEqual(['auditor']);
    expect(await list('supported eq true')).toHaveLength(4);
    expect(await list('value eq "nobody"')).toEqual([]);

    const sorted = await t.get('/Roles?sortBy=display&sortOrder=descending').expect(200);
    expect(values(sorted.body)).toEqual(['viewer', 'billing.manager', 'auditor', 'admin']);
    const searched = await t
      .post('/Roles/.search', { filter: 'value sw "b"', attributes: ['value'] })
      .expect(200);
    expect(searched.body.Resources).toEqual([
      { schemas: [ROLE], id: expect.any(String), value: 'billing.manager' },
    ]);
  });

  it('answers 400 invalidFilter for what the catalogue has no attribute for, never 500', async () => {
    const t = await withRoles();
    for (const filter of [
      'userName eq "x"',
      'members[value eq "x"]',
      'value.sub eq "x"',
      'supported eq "yes"',
      'supported co true',
      'value co null',
      'value gt 5',
      'display eq true',
      'meta.created gt "2026-01-01T00:00:00Z"',
      'value eq',
    ]) {
      expectScimError(await t.get(`/Roles?filter=${encodeURIComponent(filter)}`), 400, 'invalidFilter');
    }
    expectScimError(await t.get('/Roles?sortBy=userName'), 400, 'invalidValue');
  });

  it('answers 404 for an id the catalogue lacks, another organization’s included', async () => {
    const t = await withRoles();
    const other = await harness.tenant();
    await catalogue(other.orgId, 'roles', [entry('other')]);
    const otherId = (await other.get('/Roles').expect(200)).body.Resources[0].id;
    expectScimError(await t.get(`/Roles/${otherId}`), 404);
    expectScimError(await t.get('/Roles/not-a-role'), 404);
    expect(values((await t.get('/Roles').expect(200)).body)).not.toContain('other');
  });

  it('is read-only: writes answer 405 with a SCIM error', async () => {
    const t = await withRoles();
    const id = (await t.get('/Roles').expect(200)).body.Resources[0].id;
    for (const res of [
      await t.post('/Roles', { schemas: [ROLE], value: 'new' }),
      await t.put(`/Roles/${id}`, { schemas: [ROLE], value: 'admin' }),
      await t.patch(`/Roles/${id}`, { Operations: [] }),
      await t.delete(`/Roles/${id}`),
      await t.delete('/Entitlements'),
    ]) {
      expectScimError(res, 405);
      expect(res.headers.allow).toMatch(/GET/);
    }
  });

  it('answers any token of the organization, whatever its scopes, and no other', async () => {
    const t = await withRoles();
    for (const scopes of [['users'], ['groups']]) {
      const token = await harness.createToken(t.orgId, { scopes });
      const scoped = await harness.tenantOf(t.orgId, token);
      expect((await scoped.get('/Roles').expect(200)).body.totalResults).toBe(4);
      expect((await scoped.get('/Entitlements').expect(200)).body.totalResults).toBe(0);
    }
    expectScimError(await harness.http.get(`${t.basePath}/Roles`), 401);
  });
});

describe('GET /Entitlements', () => {
  it('lists the environment’s entitlements and the organization’s own; empty answers an empty list', async () => {
    const t = await harness.tenant();
    const empty = await t.get('/Entitlements').expect(200);
    expect(empty.body).toEqual({
      schemas: [LIST],
      totalResults: 0,
      startIndex: 1,
      itemsPerPage: 0,
      Resources: [],
    });
    await catalogue(t.orgId, 'entitlements', [entry('reports.export', 'Export reports')]);
    const res = await t.get('/Entitlements?filter=value%20eq%20%22reports.export%22').expect(200);
    expect(res.body.Resources).toEqual([
      {
        schemas: [ENTITLEMENT],
        id: expect.any(String),
        value: 'reports.export',
        display: 'Export reports',
        supported: true,
        meta: {
          resourceType: 'Entitlement',
          location: `${t.baseUrl}/Entitlements/${res.body.Resources[0].id}`,
        },
      },
    ]);
  });
});

describe('discovery', () => {
  const ids = (body: { Resources: { id: string }[] }) => body.Resources.map((r) => r.id);

  it('lists Role and Entitlement in /ResourceTypes and /Schemas only while the catalogue of each has entries', async () => {
    const t = await harness.tenant();
    expect(ids((await t.get('/ResourceTypes').expect(200)).body)).toEqual(['User', 'Group']);
    expect(ids((await t.get('/Schemas').expect(200)).body)).not.toContain(ROLE);
    expectScimError(await t.get('/ResourceTypes/Role'), 404);
    expectScimError(await t.get(`/Schemas/${ROLE}`), 404);

    await catalogue(t.orgId, 'roles', [entry('admin')]);
    expect(ids((await t.get('/ResourceTypes').expect(200)).body)).toEqual(['User', 'Group', 'Role']);
    const role = (await t.get('/ResourceTypes/Role').expect(200)).body;
    expect(role).toMatchObject({
      id: 'Role',
      name: 'Role',
      endpoint: '/Roles',
      schema: ROLE,
      schemaExtensions: [],
      meta: { resourceType: 'ResourceType', location: `${t.baseUrl}/ResourceTypes/Role` },
    });
    const schemas = (await t.get('/Schemas').expect(200)).body;
    expect(ids(schemas)).toContain(ROLE);
    expect(ids(schemas)).not.toContain(ENTITLEMENT);
    const schema = (await t.get(`/Schemas/${ROLE}`).expect(200)).body;
    expect(schema.attributes.map((a: { name: string }) => a.name)).toEqual([
      'value',
      'display',
      'type',
      'supported',
      'description',
    ]);
    expect(schema.attributes.every((a: { mutability: string }) => a.mutability === 'readOnly')).toBe(true);

    await catalogue(t.orgId, 'entitlements', [entry('reports')]);
    expect(ids((await t.get('/ResourceTypes').expect(200)).body)).toEqual([
      'User',
      'Group',
      'Role',
      'Entitlement',
    ]);
    expect(ids((await t.get('/Schemas').expect(200)).body)).toContain(ENTITLEMENT);

    await catalogue(t.orgId, 'roles', []);
    expect(ids((await t.get('/ResourceTypes').expect(200)).body)).toEqual(['User', 'Group', 'Entitlement']);
    expectScimError(await t.get('/ResourceTypes/Role'), 404);
  });

  it('counts the environment’s catalogue for every organization', async () => {
    const t = await harness.tenant();
    await catalogue(null, 'roles', [entry('member')]);
    try {
      expect(ids((await t.get('/ResourceTypes').expect(200)).body)).toContain('Role');
      expect(values((await t.get('/Roles').expect(200)).body)).toEqual(['member']);
    } finally {
      await catalogue(null, 'roles', []);
    }
  });

  it('advertises RolesAndEntitlements in /ServiceProviderConfig', async () => {
    const t = await harness.tenant();
    const spc = (await t.get('/ServiceProviderConfig').expect(200)).body;
    expect(spc.RolesAndEntitlements).toEqual({
      roles: { supported: true, multipleRolesSupported: true, primarySupported: true, typeSupported: true },
      entitlements: {
        supported: true,
        multipleEntitlementsSupported: true,
        primarySupported: true,
        typeSupported: true,
      },
    });
  });
});
