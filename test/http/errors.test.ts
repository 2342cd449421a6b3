// Every bad input of the Foundation issue gets a SCIM error with the right status and scimType,
// never a 500, and never a half-written row.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Harness, type Tenant, useHarness } from '../helpers/harness.js';
import { SCIM_ERROR, SCIM_JSON } from '../helpers/scim.js';

let harness: Harness;
let t: Tenant;
useHarness(async (h) => {
  harness = h;
  t = await harness.tenant();
});

function raw(method: 'post' | 'put' | 'get' | 'delete' | 'patch', path: string) {
  return harness.http[method](t.basePath + path).set('Authorization', `Bearer ${t.token}`);
}

async function userCount(): Promise<number> {
  const row = await harness.database.db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('org_id', '=', t.orgId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('bad input', () => {
  const cases: {
    name: string;
    send: () => ReturnType<typeof raw>;
    status: number;
    scimType?: string;
    detail?: RegExp;
  }[] = [
    {
      name: 'malformed JSON',
      send: () => raw('post', '/Users').set('Content-Type', SCIM_JSON).send('{"userName": "x",'),
      status: 400,
      scimType: 'invalidSyntax',
    },
    {
      name: 'a JSON array body',
      send: () => raw('post', '/Users').set('Content-Type', 'application/json').send('[{"userName":"x"}]'),
      status: 400,
      scimType: 'invalidSyntax',
    },
    {
      name: 'a JSON string body',
      send: () => raw('post', '/Users').set('Content-Type', 'application/json').send('"SecureLogin"'),
      status: 400,
      scimType: 'invalidSyntax',
    },
    {
      name: 'an empty body',
      send: () => raw('post', '/Users').set('Content-Type', 'application/json').send(''),
      status: 400,
      scimType: 'invalidValue',
      detail: /userName is required/,
    },
    {
      name: 'a schema violation',
      send: () => raw('post', '/Users').set('Content-Type', SCIM_JSON).send({ userName: 'v', active: 7 }),
      status: 400,
      scimType: 'invalidValue',
      detail: /active/,
    },
    {
      name: 'a NUL character in a string',
      send: () => raw('post', '/Users').set('Content-Type', SCIM_JSON).send({ userName: 'nul\u0000' }),
      status: 400,
      scimType: 'invalidValue',
      detail: /userName/,
    },
    {
      name: 'an unpaired surrogate in a nested string',
      send: () =>
        raw('post', '/Users')
          .set('Content-Type', SCIM_JSON)
          .send('{"userName":"s","name":{"givenName":"\\ud800"}}'),
      status: 400,
      scimType: 'invalidValue',
      detail: /name\.givenName/,
    },
    {
      name: 'a body over 1 MB',
      send: () =>
        raw('post', '/Users')
          .set('Content-Type', SCIM_JSON)
          .send(JSON.stringify({ userName: 'big', displayName: 'x'.repeat(1_100_000) })),
      status: 413,
    },
    {
      name: 'text/plain',
      send: () => raw('post', '/Users').set('Content-Type', 'text/plain').send('{"userName":"t"}'),
      status: 415,
    },
    {
      name: 'a form body',
      send: () =>
        raw('post', '/Users').set('Content-Type', 'application/x-www-form-urlencoded').send('userName=f'),
      status: 415,
    },
    {
      name: 'XML on PUT',
      send: () =>
        raw('put', '/Users/00000000-0000-4000-8000-000000000000')
          .set('Content-Type', 'application/xml')
          .send('<user/>'),
      status: 415,
    },
    { name: 'an unknown endpoint', send: () => raw('get', '/Widgets'), status: 404 },
    { name: 'a malformed escape in the path', send: () => raw('get', '/Users/%E0%A4%A'), status: 404 },
    { name: 'an unknown nested path', send: () => raw('get', '/Users/a/b'), status: 404 },
    { name: 'DELETE on the collection', send: () => raw('delete', '/Users'), status: 405 },
    {
      name: 'POST on a resource',
      send: () => raw('post', '/Users/00000000-0000-4000-8000-000000000000'),
      status: 405,
    },
    { name: 'POST on ServiceProviderConfig', send: () => raw('post', '/ServiceProviderConfig'), status: 405 },
    { name: 'GET /Bulk', send: () => raw('get', '/Bulk'), status: 501 },
    {
      name: 'POST /Bulk',
      send: () => raw('post', '/Bulk').set('Content-Type', SCIM_JSON).send({ Operations: [] }),
      status: 501,
    },
    { name: 'GET /Me', send: () => raw('get', '/Me'), status: 501 },
    {
      name: 'a startIndex that is not a number',
      send: () => raw('get', '/Users?startIndex=first'),
      status: 400,
      scimType: 'invalidValue',
    },
    {
      // An empty filter must not read as "every user": an existence check would see a match.
      name: 'an empty filter',
      send: () => raw('get', '/Users?filter='),
      status: 400,
      scimType: 'invalidFilter',
    },
    {
      name: 'attributes together with excludedAttributes',
      send: () => raw('get', '/Users?attributes=userName&excludedAttributes=emails'),
      status: 400,
      scimType: 'invalidValue',
    },
  ];

  it.each(cases)('$name → $status', async ({ send, status, scimType, detail }) => {
    const before = await userCount();
    const res = await send();
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toBe(SCIM_JSON);
    expect(res.body.schemas).toEqual([SCIM_ERROR]);
    expect(res.body.status).toBe(String(status));
    expect(res.body.detail).toEqual(expect.any(String));
    if (scimType) expect(res.body.scimType).toBe(scimType);
    else expect(res.body).not.toHaveProperty('scimType');
    if (detail) expect(res.body.detail).toMatch(detail);
    if (status === 405) expect(res.headers.allow).toBeTruthy();
    expect(await userCount()).toBe(before);
  });
});

describe('content types that are accepted', () => {
  it.each([
    ['application/scim+json', 'ct-1'],
    ['application/scim+json; charset=utf-8', 'ct-2'],
    ['application/json', 'ct-3'],
    ['application/json; charset=UTF-8', 'ct-4'],
  ])('%s', async (type, userName) => {
    const res = await raw('post', '/Users').set('Content-Type', type).send(JSON.stringify({ userName }));
    expect(res.status).toBe(201);
    expect(res.headers['content-type']).toBe(SCIM_JSON);
  });

  it('a body with no Content-Type at all is read as JSON', async () => {
    const res = await raw('post', '/Users').unset('Content-Type').send(Buffer.from('{"userName":"no-type"}'));
    expect(res.status).toBe(201);
  });

  it('routes match case-insensitively and with a trailing slash', async () => {
    await raw('get', '/users').expect(200);
    await raw('get', '/Users/').expect(200);
    await raw('get', '/serviceproviderconfig').expect(200);
  });
});

describe('no 500 for any JSON body', () => {
  it('POST and PUT of arbitrary JSON answer 201/200, 400 or 409, never 500', async () => {
    const target = (await t.post('/Users', { userName: 'fuzz-target' }).expect(201)).body.id;
    const attributeName = fc.constantFrom(
      'userName',
      'name',
      'emails',
      'active',
      'addresses',
      'phoneNumbers',
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
      'manager',
      'schemas',
      'x509Certificates',
      'groups',
      'meta',
      'id',
    );
    const body = fc.oneof(
      fc.jsonValue(),
      fc.dictionary(attributeName, fc.jsonValue()),
      fc.record(
        { userName: fc.string({ unit: 'binary' }), title: fc.string({ unit: 'binary' }) },
        { requiredKeys: [] },
      ),
    );
    await fc.assert(
      fc.asyncProperty(body, fc.boolean(), async (value, put) => {
        const res = put
          ? await raw('put', `/Users/${target}`).set('Content-Type', SCIM_JSON).send(JSON.stringify(value))
          : await raw('post', '/Users').set('Content-Type', SCIM_JSON).send(JSON.stringify(value));
        expect([200, 201, 400, 409]).toContain(res.status);
        expect(res.headers['content-type']).toBe(SCIM_JSON);
      }),
      { numRuns: 150 },
    );
  });
});
