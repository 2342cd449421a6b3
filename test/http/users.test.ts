import { describe, expect, it } from 'vitest';
import { validateResource } from '../../src/resources/validate.js';
import { resourceTypes } from '../../src/schema/registry.js';
import { createGroup, groupCalls } from '../helpers/groups.js';
import { type Harness, type Tenant, useHarness } from '../helpers/harness.js';
import { ENTERPRISE, SCIM_JSON, USER } from '../helpers/scim.js';

let harness: Harness;
let t: Tenant;
useHarness(async (h) => {
  harness = h;
  t = await harness.tenant();
});

// Entra's create body: nulls, meta, empty roles, string booleans.
const entraUser = (userName: string) => ({
  schemas: [USER, ENTERPRISE],
  externalId: '3f9e2d7a-1b44-4c0e-9a51-0c2d9e8b7f10',
  userName,
  active: 'True',
  displayName: 'Ana Ruiz',
  emails: [{ primary: 'true', type: 'work', value: userName }],
  name: { formatted: 'Ana Ruiz', familyName: 'Ruiz', givenName: 'Ana' },
  phoneNumbers: null,
  addresses: null,
  title: null,
  meta: { resourceType: 'User' },
  roles: [],
  password: 'hunter2-Secret!',
  [ENTERPRISE]: { department: 'Sales', manager: null },
});

describe('POST /Users', () => {
  it('creates a user: 201, Location, absolute meta.location, coerced booleans, no password', async () => {
    const res = await t.post('/Users', entraUser('ana.ruiz@corp.example')).expect(201);
    expect(res.headers['content-type']).toBe(SCIM_JSON);
    const body = res.body;
    expect(body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.location).toBe(`${t.baseUrl}/Users/${body.id}`);
    expect(body.meta).toEqual({
      resourceType: 'User',
      created: expect.any(String),
      lastModified: body.meta.created,
      location: res.headers.location,
    });
    expect(body.meta.location.startsWith('https://scim.test.example/scim/v2/')).toBe(true);
    expect(body.active).toBe(true);
    expect(body.emails).toEqual([{ primary: true, type: 'work', value: 'ana.ruiz@corp.example' }]);
    expect(body.schemas).toEqual([USER, ENTERPRISE]);
    expect(body[ENTERPRISE]).toEqual({ department: 'Sales' });
    expect(body).not.toHaveProperty('password');
    expect(body).not.toHaveProperty('roles');
    expect(body).not.toHaveProperty('phoneNumbers');
    // The response is what the registry says a User response is.
    expect(() => validateResource(resourceTypes.User, 'response', body)).not.toThrow();
    const stored = await harness.database.db
      .selectFrom('users')
      .select(['data', 'user_name', 'active'])
      .where('id', '=', body.id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(stored.data)).not.toContain('hunter2');
    expect(stored.user_name).toBe('ana.ruiz@corp.example');
  });

  it('refuses a second userName that differs only in case: 409 uniqueness', async () => {
    await t.post('/Users', { schemas: [USER], userName: 'Kim@Corp.example' }).expect(201);
    const res = await t.post('/Users', { schemas: [USER], userName: 'kim@CORP.EXAMPLE' }).expect(409);
    expect(res.body).toMatchObject({ status: '409', scimType: 'uniqueness' });
    expect(res.body.detail).toBeTruthy();
  });

  it('keeps userName unique per organization only', async () => {
    const other = await harness.tenant();
    await t.post('/Users', { userName: 'shared@corp.example' }).expect(201);
    await other.post('/Users', { userName: 'shared@corp.example' }).expect(201);
  });

  it('does not make externalId unique', async () => {
    await t.post('/Users', { userName: 'e1', externalId: 'same' }).expect(201);
    await t.post('/Users', { userName: 'e2', externalId: 'same' }).expect(201);
  });

  it('accepts application/json, charset parameters, case-insensitive names and nested core URN', async () => {
    const res = await harness.http
      .post(`${t.basePath}/Users`)
      .set('Authorization', `Bearer ${t.token}`)
      .set('Content-Type', 'application/json; charset=utf-8')
      .send(
        JSON.stringify({
          UserName: 'casey',
          Emails: [{ Value: 'casey@corp.example', Primary: 'True' }],
          [USER]: { displayName: 'Casey' },
          [`${ENTERPRISE}:employeeNumber`]: '42',
          [ENTERPRISE.toUpperCase()]: { Department: 'Ops', Manager: { Value: 'boss-1' } },
        }),
      )
      .expect(201);
    expect(res.body).toMatchObject({
      userName: 'casey',
      displayName: 'Casey',
      emails: [{ value: 'casey@corp.example', primary: true }],
      [ENTERPRISE]: { employeeNumber: '42', department: 'Ops', manager: { value: 'boss-1' } },
    });
  });

  it('ignores unknown and read-only attributes', async () => {
    const res = await t
      .post('/Users', {
        userName: 'ro',
        id: 'mine',
        groups: [{ value: 'g' }],
        adreses: [],
        meta: { created: 'x' },
      })
      .expect(201);
    expect(res.body.id).not.toBe('mine');
    expect(res.body).not.toHaveProperty('groups');
    expect(res.body).not.toHaveProperty('adreses');
  });

  it.each([
    ['no userName', { name: { givenName: 'x' } }, /userName is required/],
    ['empty userName', { userName: '' }, /userName/],
    ['a boolean that is not one', { userName: 'b1', active: 'maybe' }, /active/],
    ['a number for a string', { userName: 'b2', emails: [{ value: 3 }] }, /emails\[0\]\.value/],
    ['a string for a complex attribute', { userName: 'b3', name: 'Ana' }, /name/],
  ])('answers 400 invalidValue for %s, naming the attribute', async (_, body, detail) => {
    const res = await t.post('/Users', body).expect(400);
    expect(res.headers['content-type']).toBe(SCIM_JSON);
    expect(res.body).toMatchObject({ status: '400', scimType: 'invalidValue' });
    expect(res.body.detail).toMatch(detail);
  });
});

describe('POST /Users answers what was stored', () => {
  it('returns the same user a later GET reads back, whatever the attributes', async () => {
    const body = {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User', ENTERPRISE],
      userName: 'Stored.Écho@Example.com',
      externalId: '00u-stored',
      name: { givenName: 'Zoë', familyName: "O'Brien", formatted: 'Zoë "Z" O\'Brien' },
      displayName: "Zoë\tO'Brien \u2028 ✓",
      emails: [
        { value: 'Stored.Echo@Example.com', type: 'work', primary: true },
        { value: 'other@example.com', type: 'home' },
      ],
      phoneNumbers: [{ value: '+1 555 0100', type: 'work' }],
      active: false,
      [ENTERPRISE]: { employeeNumber: '0042', department: 'R&D', manager: { value: 'm-1' } },
    };
    const created = (await t.post('/Users', body).expect(201)).body;
    const read = (await t.get(`/Users/${created.id}`).expect(200)).body;
    expect(read).toEqual(created);
    expect(created).toMatchObject({
      userName: body.userName,
      active: false,
      [ENTERPRISE]: { department: 'R&D' },
    });
    // With no `active`, the response and the stored row both say true.
    const plain = (await t.post('/Users', { userName: 'stored-plain' }).expect(201)).body;
    expect(plain.active).toBe(true);
    expect((await t.get(`/Users/${plain.id}`).expect(200)).body).toEqual(plain);
  });
});

describe('a page of users', () => {
  it('carries each user as GET /Users/{id} shows it, groups and extensions included', async () => {
    const g = await groupCalls(() => harness).groupTenant();
    const user = (
      await g
        .post('/Users', {
          schemas: [USER, ENTERPRISE],
          userName: 'paged.as.read@example.com',
          displayName: 'Zoë "Z" \\ O\'Brien',
          [ENTERPRISE]: { department: 'R&D' },
        })
        .expect(201)
    ).body;
    for (const displayName of ['Sales "EMEA" \\ Ü \u2028', 'Alpha'])
      await createGroup(g, { displayName, members: [{ value: user.id }] });
    const read = (await g.get(`/Users/${user.id}`).expect(200)).body;
    expect(read.groups).toHaveLength(2);
    const byUserName = (userName: string) =>
      `/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`;
    expect((await g.get(byUserName(user.userName)).expect(200)).body.Resources).toEqual([read]);
    // One in no group, without extensions.
    const plain = (await g.post('/Users', { userName: 'paged.plain' }).expect(201)).body;
    expect((await g.get(byUserName('paged.plain')).expect(200)).body.Resources).toEqual([
      (await g.get(`/Users/${plain.id}`).expect(200)).body,
    ]);
  });
});

describe('GET /Users/{id}', () => {
  it('returns the user, and 404 with a SCIM error for an unknown or malformed id', async () => {
    const created = (await t.post('/Users', { userName: 'reader' }).expect(201)).body;
    const res = await t.get(`/Users/${created.id}`).expect(200);
    expect(res.body).toEqual(created);
    for (const id of ['010101001010101011001010101011', '00000000-0000-4000-8000-000000000000']) {
      const missing = await t.get(`/Users/${id}`).expect(404);
      expect(missing.body).toMatchObject({
        schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
        status: '404',
      });
      expect(missing.body.detail).toBeTruthy();
    }
  });

  it('never shows a user of another organization', async () => {
    const created = (await t.post('/Users', { userName: 'private' }).expect(201)).body;
    const other = await harness.tenant();
    await other.get(`/Users/${created.id}`).expect(404);
    await other.put(`/Users/${created.id}`, { userName: 'stolen' }).expect(404);
    await other.delete(`/Users/${created.id}`).expect(404);
    await t.get(`/Users/${created.id}`).expect(200);
  });

  it('answers a GET with no Accept or Content-Type header', async () => {
    const created = (await t.post('/Users', { userName: 'bare' }).expect(201)).body;
    const res = await harness.http
      .get(`${t.basePath}/Users/${created.id}`)
      .set('Authorization', `Bearer ${t.token}`)
      .unset('Accept')
      .unset('User-Agent')
      .expect(200);
    expect(res.headers['content-type']).toBe(SCIM_JSON);
  });

  it('applies attributes and excludedAttributes', async () => {
    const created = (
      await t
        .post('/Users', {
          userName: 'proj',
          displayName: 'P',
          name: { givenName: 'G', familyName: 'F' },
          emails: [{ value: 'p@x', type: 'work' }],
          [ENTERPRISE]: { department: 'D', costCenter: 'C' },
        })
        .expect(201)
    ).body;
    const only = (await t.get(`/Users/${created.id}?attributes=userName,name.givenName`).expect(200)).body;
    expect(only).toEqual({
      schemas: created.schemas,
      id: created.id,
      userName: 'proj',
      name: { givenName: 'G' },
    });
    const ext = (await t.get(`/Users/${created.id}?attributes=${ENTERPRISE}:department`).expect(200)).body;
    expect(ext).toEqual({ schemas: created.schemas, id: created.id, [ENTERPRISE]: { department: 'D' } });
    const excluded = (
      await t.get(`/Users/${created.id}?excludedAttributes=emails,name.familyName,meta,id`).expect(200)
    ).body;
    expect(excluded).toMatchObject({ id: created.id, userName: 'proj', name: { givenName: 'G' } });
    expect(excluded).not.toHaveProperty('emails');
    expect(excluded).not.toHaveProperty('meta');
    expect(excluded.name).not.toHaveProperty('familyName');
    const sub = (await t.get(`/Users/${created.id}?attributes=EMAILS.value`).expect(200)).body;
    expect(sub.emails).toEqual([{ value: 'p@x' }]);
    await t.get(`/Users/${created.id}?attributes=userName&excludedAttributes=name`).expect(400);
  });
});

describe('PUT /Users/{id}', () => {
  it('replaces the user: omitted attributes are cleared, read-only ignored, meta.lastModified moves', async () => {
    const created = (
      await t
        .post('/Users', { userName: 'put-me', displayName: 'Before', title: 'T', nickName: 'N' })
        .expect(201)
    ).body;
    await new Promise((r) => setTimeout(r, 5));
    const res = await t
      .put(`/Users/${created.id}`, {
        ...created,
        id: 'ignored',
        userName: 'put-me-2',
        displayName: 'After',
        title: undefined,
        nickName: null,
        active: 'False',
        password: 'p',
      })
      .expect(200);
    expect(res.body).toMatchObject({
      id: created.id,
      userName: 'put-me-2',
      displayName: 'After',
      active: false,
    });
    expect(res.body).not.toHaveProperty('title');
    expect(res.body).not.toHaveProperty('nickName');
    expect(res.body).not.toHaveProperty('password');
    expect(res.body.meta.created).toBe(created.meta.created);
    expect(res.body.meta.lastModified > created.meta.lastModified).toBe(true);
    expect((await t.get(`/Users/${created.id}`).expect(200)).body).toEqual(res.body);
  });

  it('refuses a PUT without userName (400) and one that takes another userName (409), changing nothing', async () => {
    const a = (await t.post('/Users', { userName: 'put-a', title: 'kept' }).expect(201)).body;
    await t.post('/Users', { userName: 'put-b' }).expect(201);
    await t.put(`/Users/${a.id}`, { userame: 'typo' }).expect(400);
    await t.put(`/Users/${a.id}`, { userName: 'PUT-B' }).expect(409);
    expect((await t.get(`/Users/${a.id}`).expect(200)).body).toEqual(a);
  });

  it('answers 404 for an unknown id', async () => {
    await t.put('/Users/00000000-0000-4000-8000-000000000000', { userName: 'x' }).expect(404);
  });
});

describe('DELETE /Users/{id}', () => {
  it('answers 204, then 404 on GET and on a second DELETE, and frees the userName', async () => {
    const created = (await t.post('/Users', { userName: 'gone' }).expect(201)).body;
    const res = await t.delete(`/Users/${created.id}`).expect(204);
    expect(res.text).toBe('');
    await t.get(`/Users/${created.id}`).expect(404);
    await t.delete(`/Users/${created.id}`).expect(404);
    await t.post('/Users', { userName: 'GONE' }).expect(201);
  });
});

describe('GET /Users (index pagination)', () => {
  it('pages in a stable order with a correct ListResponse', async () => {
    const fresh = await harness.tenant();
    const names = Array.from({ length: 7 }, (_, i) => `page-${i}`);
    for (const userName of names) await fresh.post('/Users', { userName }).expect(201);

    const all = (await fresh.get('/Users').expect(200)).body;
    expect(all).toMatchObject({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
      totalResults: 7,
      startIndex: 1,
      itemsPerPage: 7,
    });
    expect(all.Resources.map((u: { userName: string }) => u.userName)).toEqual(names);

    const page = (await fresh.get('/Users?startIndex=3&count=2').expect(200)).body;
    expect(page).toMatchObject({ totalResults: 7, startIndex: 3, itemsPerPage: 2 });
    expect(page.Resources.map((u: { userName: string }) => u.userName)).toEqual(['page-2', 'page-3']);

    const past = (await fresh.get('/Users?startIndex=20&count=5').expect(200)).body;
    expect(past).toMatchObject({ totalResults: 7, startIndex: 20, itemsPerPage: 0, Resources: [] });

    const clamped = (await fresh.get('/Users?startIndex=-4&count=-1').expect(200)).body;
    expect(clamped).toMatchObject({ totalResults: 7, startIndex: 1, itemsPerPage: 0, Resources: [] });

    const projected = (await fresh.get('/Users?attributes=userName&count=1').expect(200)).body;
    expect(projected.Resources).toEqual([{ schemas: [USER], id: expect.any(String), userName: 'page-0' }]);

    // Unknown query parameters, such as Entra's feature flag, are ignored.
    await fresh.get('/Users?aadOptscim062020&count=1').expect(200);
  });

  it('answers an empty organization with Resources: []', async () => {
    const empty = await harness.tenant();
    const res = await empty.get('/Users').expect(200);
    expect(res.body).toEqual({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
      totalResults: 0,
      startIndex: 1,
      itemsPerPage: 0,
      Resources: [],
    });
  });

  it('caps count at the maximum page size', async () => {
    const res = await t.get('/Users?count=100000').expect(200);
    expect(res.body.itemsPerPage).toBeLessThanOrEqual(1000);
  });
});
