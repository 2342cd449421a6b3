import { describe, expect, it } from 'vitest';
import { capabilities } from '../../src/discovery/capabilities.js';
import { type Harness, PUBLIC_URL, type Tenant, useHarness } from '../helpers/harness.js';
import {
  ENTERPRISE,
  expectScimError,
  GROUP,
  LIST,
  RESOURCE_TYPE,
  SCHEMA,
  SCIM_JSON,
  SPC,
  USER,
} from '../helpers/scim.js';

let harness: Harness;
let t: Tenant;
useHarness(async (h) => {
  harness = h;
  t = await harness.tenant();
});

async function get(path: string) {
  const res = await t.get(path);
  expect(res.status, `GET ${path}`).toBe(200);
  expect(res.headers['content-type']).toBe(SCIM_JSON);
  return res.body;
}

describe('GET /ServiceProviderConfig', () => {
  it('says what is true: no bulk, no password change, no etag, bearer tokens, index pagination', async () => {
    const spc = await get('/ServiceProviderConfig');
    expect(spc.schemas).toEqual([SPC]);
    expect(spc.bulk).toEqual({
      supported: false,
      maxOperations: expect.any(Number),
      maxPayloadSize: expect.any(Number),
    });
    expect(spc.changePassword).toEqual({ supported: false });
    expect(spc.etag).toEqual({ supported: false });
    expect(spc.filter).toEqual({ supported: expect.any(Boolean), maxResults: expect.any(Number) });
    expect(spc.filter.maxResults).toBeGreaterThan(0);
    expect(spc.authenticationSchemes).toHaveLength(1);
    expect(spc.authenticationSchemes[0]).toMatchObject({
      type: 'oauthbearertoken',
      name: expect.any(String),
      description: expect.any(String),
    });
    expect(spc.pagination).toMatchObject({ index: true, cursor: expect.any(Boolean) });
    expect(spc.meta).toEqual({
      resourceType: 'ServiceProviderConfig',
      location: `${PUBLIC_URL}/scim/v2/${t.orgId}/ServiceProviderConfig`,
    });
    expect(spc.meta.location).toBe(`${t.baseUrl}/ServiceProviderConfig`);
  });

  it('mirrors src/discovery/capabilities.ts', async () => {
    const spc = await get('/ServiceProviderConfig');
    expect(spc.patch).toEqual({ supported: capabilities.patch });
    expect(spc.filter).toEqual({ supported: capabilities.filter, maxResults: capabilities.maxPageSize });
    expect(spc.sort).toEqual({ supported: capabilities.sort });
    expect(spc.pagination).toMatchObject({
      cursor: capabilities.cursorPagination,
      index: true,
      defaultPageSize: capabilities.defaultPageSize,
      maxPageSize: capabilities.maxPageSize,
    });
  });

  it('has no id (RFC 7644 §4: it is not a resource with an id)', async () => {
    const spc = await get('/ServiceProviderConfig');
    expect(spc).not.toHaveProperty('id');
  });

  it.each(['/serviceproviderconfig', '/ServiceProviderConfig/'])('answers %s as well', async (path) => {
    const spc = await get(path);
    expect(spc.schemas).toEqual([SPC]);
  });
});

describe('GET /ResourceTypes', () => {
  const userType = () => ({
    schemas: [RESOURCE_TYPE],
    id: 'User',
    name: 'User',
    endpoint: '/Users',
    description: expect.any(String),
    schema: USER,
    schemaExtensions: [{ schema: ENTERPRISE, required: false }],
    meta: { resourceType: 'ResourceType', location: `${t.baseUrl}/ResourceTypes/User` },
  });
  const groupType = () => ({
    schemas: [RESOURCE_TYPE],
    id: 'Group',
    name: 'Group',
    endpoint: '/Groups',
    description: expect.any(String),
    schema: GROUP,
    schemaExtensions: [],
    meta: { resourceType: 'ResourceType', location: `${t.baseUrl}/ResourceTypes/Group` },
  });

  it('lists User first, then Group, in a ListResponse', async () => {
    const list = await get('/ResourceTypes');
    expect(list).toEqual({
      schemas: [LIST],
      totalResults: 2,
      startIndex: 1,
      itemsPerPage: 2,
      Resources: [userType(), groupType()],
    });
    expect(list.Resources[0].meta.location.startsWith(`${PUBLIC_URL}/scim/v2/`)).toBe(true);
  });

  it.each([
    ['User', userType],
    ['Group', groupType],
  ])('GET /ResourceTypes/%s answers the same document as the list', async (id, expected) => {
    const one = await get(`/ResourceTypes/${id}`);
    expect(one).toEqual(expected());
    const list = await get('/ResourceTypes');
    expect(list.Resources).toContainEqual(one);
  });

  it.each(['Nope', 'Users', 'urn:ietf:params:scim:schemas:core:2.0:User'])(
    'answers 404 with a SCIM error for /ResourceTypes/%s',
    async (id) => {
      expectScimError(await t.get(`/ResourceTypes/${id}`), 404);
    },
  );
});

const ATTRIBUTE_TYPES = [
  'string',
  'boolean',
  'decimal',
  'integer',
  'dateTime',
  'reference',
  'complex',
  'binary',
];
const MUTABILITY = ['readOnly', 'readWrite', 'immutable', 'writeOnly'];
const RETURNED = ['always', 'never', 'default', 'request'];
const UNIQUENESS = ['none', 'server', 'global'];
const CHARACTERISTICS = [
  'name',
  'type',
  'multiValued',
  'description',
  'required',
  'caseExact',
  'mutability',
  'returned',
  'uniqueness',
];

interface Attr {
  name: string;
  type: string;
  subAttributes?: Attr[];
  [key: string]: unknown;
}

/** Every attribute (sub-attributes included) with its dotted path. */
function walk(attributes: Attr[], prefix = ''): [string, Attr][] {
  return attributes.flatMap((a) => [
    [`${prefix}${a.name}`, a] as [string, Attr],
    ...(a.subAttributes ? walk(a.subAttributes, `${prefix}${a.name}.`) : []),
  ]);
}

describe('GET /Schemas', () => {
  it('lists the core User, enterprise User and Group schemas', async () => {
    const list = await get('/Schemas');
    expect(list).toMatchObject({ schemas: [LIST], totalResults: 3, startIndex: 1, itemsPerPage: 3 });
    expect(list.Resources).toHaveLength(3);
    expect(list.Resources.map((s: { id: string }) => s.id).sort()).toEqual([GROUP, USER, ENTERPRISE].sort());
    for (const schema of list.Resources) {
      expect(schema.schemas).toEqual([SCHEMA]);
      expect(schema.name).toEqual(expect.any(String));
      expect(schema.description).toEqual(expect.any(String));
      expect(Array.isArray(schema.attributes)).toBe(true);
      expect(schema.attributes.length).toBeGreaterThan(0);
      expect(schema.meta).toEqual({ resourceType: 'Schema', location: `${t.baseUrl}/Schemas/${schema.id}` });
      expect(schema.meta.location.startsWith(`${PUBLIC_URL}/scim/v2/${t.orgId}/Schemas/`)).toBe(true);
    }
    const user = list.Resources.find((s: { id: string }) => s.id === USER);
    expect(user).toMatchObject({ name: 'User', description: 'User Account' });
    expect(list.Resources.find((s: { id: string }) => s.id === GROUP).name).toBe('Group');
  });

  it.each([USER, ENTERPRISE, GROUP])('GET /Schemas/%s answers the schema from the list', async (urn) => {
    const one = await get(`/Schemas/${urn}`);
    expect(one.id).toBe(urn);
    const list = await get('/Schemas');
    expect(list.Resources).toContainEqual(one);
  });

  it.each([
    ['upper case', USER.toUpperCase(), USER],
    ['lower case', ENTERPRISE.toLowerCase(), ENTERPRISE],
    ['mixed case', 'Urn:IETF:params:SCIM:schemas:core:2.0:group', GROUP],
  ])('finds a schema by its URN in %s', async (_, asked, urn) => {
    const one = await get(`/Schemas/${asked}`);
    expect(one.id).toBe(urn);
    expect(one.meta.location).toBe(`${t.baseUrl}/Schemas/${urn}`);
  });

  it.each([
    'urn:ietf:params:scim:schemas:core:2.0:Nope',
    'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig',
    'User',
  ])('answers 404 with a SCIM error for /Schemas/%s', async (urn) => {
    expectScimError(await t.get(`/Schemas/${urn}`), 404);
  });

  it('describes every attribute with all nine characteristics, in camelCase', async () => {
    const list = await get('/Schemas');
    let count = 0;
    for (const schema of list.Resources) {
      for (const [path, attr] of walk(schema.attributes)) {
        count++;
        const where = `${schema.id}:${path}`;
        for (const key of CHARACTERISTICS) expect(attr, where).toHaveProperty(key);
        expect(attr.name, where).toMatch(/^(\$ref|[a-z][A-Za-z0-9]*)$/);
        expect(ATTRIBUTE_TYPES, where).toContain(attr.type);
        expect(MUTABILITY, where).toContain(attr.mutability);
        expect(RETURNED, where).toContain(attr.returned);
        expect(UNIQUENESS, where).toContain(attr.uniqueness);
        for (const flag of ['multiValued', 'required', 'caseExact']) {
          expect(typeof attr[flag], `${where}.${flag}`).toBe('boolean');
        }
        expect(typeof attr.description, where).toBe('string');
        expect((attr.description as string).length, where).toBeGreaterThan(0);
        if (attr.type === 'complex') expect(attr.subAttributes?.length, where).toBeGreaterThan(0);
        else expect(attr, where).not.toHaveProperty('subAttributes');
        if (attr.type === 'reference') expect(attr.referenceTypes, where).toEqual(expect.any(Array));
      }
    }
    expect(count).toBeGreaterThan(30);
  });

  it('marks userName required and unique, and password writeOnly and never returned', async () => {
    const user = await get(`/Schemas/${USER}`);
    const byName = new Map(walk(user.attributes));
    expect(byName.get('userName')).toMatchObject({ type: 'string', required: true, uniqueness: 'server' });
    expect(byName.get('password')).toMatchObject({ returned: 'never', mutability: 'writeOnly' });
    expect(byName.get('emails')).toMatchObject({ type: 'complex', multiValued: true });
    expect(byName.get('emails.value')).toMatchObject({ type: 'string' });
    const group = await get(`/Schemas/${GROUP}`);
    expect(new Map(walk(group.attributes)).get('displayName')).toMatchObject({ required: true });
  });
});

describe('filters on discovery lists', () => {
  it.each([
    '/Schemas?filter=id eq "urn:ietf:params:scim:schemas:core:2.0:User"',
    '/ResourceTypes?filter=name eq "User"',
    '/ResourceTypes?filter=',
  ])('GET %s is 403 (RFC 7644 §4: a client must not take the whole list for the matches)', async (path) => {
    const res = await t.get(path);
    expectScimError(res, 403);
    expect(res.body.detail).toMatch(/takes no filter/);
  });
});

describe('methods and unsupported endpoints', () => {
  const readOnly = [
    '/ServiceProviderConfig',
    '/Schemas',
    '/ResourceTypes',
    '/ResourceTypes/User',
    `/Schemas/${USER}`,
  ];
  const methods = ['post', 'put', 'patch', 'delete'] as const;
  const table = readOnly.flatMap((path) => methods.map((method) => [method, path] as const));

  it.each(table)('answers %s %s with 405, a SCIM error and an Allow header', async (method, path) => {
    const req = t[method](path, method === 'delete' ? undefined : { schemas: [SPC] });
    const res = await req;
    expectScimError(res, 405);
    const allowed = (res.headers.allow ?? '').split(/,\s*/);
    expect(allowed).toContain('GET');
    expect(allowed).not.toContain(method.toUpperCase());
  });

  it.each([
    ['get', '/Bulk'],
    ['post', '/Bulk'],
    ['get', '/Me'],
    ['post', '/Me'],
    ['put', '/Me'],
    ['patch', '/Me'],
    ['delete', '/Me'],
  ] as const)('answers %s %s with 501 and a SCIM error', async (method, path) => {
    const body =
      path === '/Bulk'
        ? { schemas: ['urn:ietf:params:scim:api:messages:2.0:BulkRequest'], Operations: [] }
        : { schemas: [USER], userName: 'me' };
    const res = await t[method](path, method === 'get' || method === 'delete' ? undefined : body);
    expectScimError(res, 501);
    const created = await harness.database.db
      .selectFrom('users')
      .select('id')
      .where('org_id', '=', t.orgId)
      .execute();
    expect(created).toEqual([]);
  });

  it('answers an unknown path under the base URL with 404 and a SCIM error', async () => {
    expectScimError(await t.get('/Nope'), 404);
  });
});
