// The Groups resource over HTTP on a real database: create, read, list, filter, sort and page, PUT,
// DELETE, and malformed bodies.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { validateResource } from '../../src/resources/validate.js';
import { resourceTypes } from '../../src/schema/registry.js';
import {
  createGroup,
  createUser,
  createUsers,
  getGroup,
  groupCalls,
  memberIds,
  sorted,
  unique,
} from '../helpers/groups.js';
import { ADMIN_TOKEN, type Harness, PUBLIC_URL, type Tenant, useHarness } from '../helpers/harness.js';
import {
  expectScimError,
  GROUP,
  type Json,
  LIST,
  PATCH_OP,
  patchOp,
  SCIM_JSON,
  SEARCH,
} from '../helpers/scim.js';

const MS_GROUP = 'http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group';

let harness: Harness;
/** Group sync on: the tenant most tests use. */
let t: Tenant;
const { groupTenant } = groupCalls(() => harness);
useHarness(async (h) => {
  harness = h;
  t = await groupTenant();
});

describe('POST /Groups', () => {
  it('creates an Entra group: 201, Location = absolute meta.location, extra schema URN and meta accepted', async () => {
    const res = await t
      .post('/Groups', {
        schemas: [GROUP, MS_GROUP],
        externalId: '8c1d0e55-2a7b-4f61-9f0e-4b1a2c3d4e5f',
        displayName: 'Finance',
        meta: { resourceType: 'Group' },
      })
      .expect(201);
    expect(res.headers['content-type']).toBe(SCIM_JSON);
    const body = res.body;
    expect(body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(res.headers.location).toBe(`${t.baseUrl}/Groups/${body.id}`);
    expect(res.headers.location?.startsWith(`${PUBLIC_URL}/scim/v2/${t.orgId}/Groups/`)).toBe(true);
    expect(body).toEqual({
      schemas: [GROUP],
      id: body.id,
      externalId: '8c1d0e55-2a7b-4f61-9f0e-4b1a2c3d4e5f',
      displayName: 'Finance',
      members: [],
      meta: {
        resourceType: 'Group',
        created: expect.any(String),
        lastModified: body.meta.created,
        location: res.headers.location,
      },
    });
    expect(() => validateResource(resourceTypes.Group, 'response', body)).not.toThrow();
    expect(await getGroup(t, body.id)).toEqual(body);
  });

  it.each([
    ['Okta Push Groups', { schemas: [GROUP], displayName: 'okta', members: [] }],
    ['no members key', { schemas: [GROUP], displayName: 'bare' }],
    ['members: null', { displayName: 'nulled', members: null }],
    ['no schemas', { displayName: 'schemaless' }],
  ])('creates a group from %s; GET shows members: []', async (_, body) => {
    const res = await t.post('/Groups', { ...body, displayName: unique(body.displayName) }).expect(201);
    expect(res.body.members).toEqual([]);
    const got = await getGroup(t, res.body.id);
    expect(got.members).toEqual([]);
    expect(got).not.toHaveProperty('externalId');
  });

  it('keeps a member display that was sent, else shows the user displayName, else the userName', async () => {
    const withDisplayName = await createUser(t, {
      userName: unique('kim@corp.example'),
      displayName: 'Kim Lee',
    });
    const userNameOnly = await createUser(t, { userName: 'lee@corp.example' });
    const overridden = await createUser(t, { userName: unique('ana'), displayName: 'Ana Ruiz' });
    const res = await t
      .post('/Groups', {
        schemas: [GROUP],
        displayName: unique('Members'),
        members: [
          { value: overridden, display: 'kim@corp.example' },
          { value: withDisplayName },
          // A client's $ref and type are not what is shown: scimd renders its own.
          { value: userNameOnly, $ref: 'https://idp.example/Users/whatever', type: 'User' },
        ],
      })
      .expect(201);
    const expected = sorted([overridden, withDisplayName, userNameOnly]).map((id) => ({
      value: id,
      $ref: `${t.baseUrl}/Users/${id}`,
      display: {
        [overridden]: 'kim@corp.example',
        [withDisplayName]: 'Kim Lee',
        [userNameOnly]: 'lee@corp.example',
      }[id],
      type: 'User',
    }));
    const byValue = (a: { value: string }, b: { value: string }) => a.value.localeCompare(b.value);
    expect([...res.body.members].sort(byValue)).toEqual(expected);
    for (const m of res.body.members)
      expect(Object.keys(m).sort()).toEqual(['$ref', 'display', 'type', 'value']);
    expect([...(await getGroup(t, res.body.id)).members].sort(byValue)).toEqual(expected);
  });

  it('lists a member sent twice once', async () => {
    const u = await createUser(t);
    const group = await createGroup(t, {
      displayName: unique('Twice'),
      members: [{ value: u }, { value: u }],
    });
    expect(await memberIds(t, group.id)).toEqual([u]);
  });

  it.each([
    ['the same case', (n: string) => n],
    ['upper case', (n: string) => n.toUpperCase()],
    ['lower case', (n: string) => n.toLowerCase()],
  ])('refuses a duplicate displayName in %s with 409 uniqueness', async (_, variant) => {
    const name = unique('Dup Name');
    await createGroup(t, { displayName: name });
    const res = await t.post('/Groups', { schemas: [GROUP], displayName: variant(name) });
    expectScimError(res, 409, 'uniqueness');
    const list = (await t.get(`/Groups?filter=${encodeURIComponent(`displayName eq "${name}"`)}`).expect(200))
      .body;
    expect(list.totalResults).toBe(1);
  });

  it('allows the same displayName in another organization', async () => {
    const other = await groupTenant();
    const name = unique('Shared');
    await createGroup(t, { displayName: name });
    await createGroup(other, { displayName: name });
  });

  it('does not make externalId unique', async () => {
    const a = await createGroup(t, { displayName: unique('ExtA'), externalId: 'same-external-id' });
    const b = await createGroup(t, { displayName: unique('ExtB'), externalId: 'same-external-id' });
    const list = (
      await t.get(`/Groups?filter=${encodeURIComponent('externalId eq "same-external-id"')}`).expect(200)
    ).body;
    expect(list.Resources.map((r: { id: string }) => r.id).sort()).toEqual(sorted([a.id, b.id]));
  });

  it.each([
    ['no displayName', { externalId: 'x' }],
    ['an empty displayName', { displayName: '' }],
    ['a null displayName', { displayName: null }],
    ['only members', { members: [] }],
  ])('refuses %s with 400 invalidValue naming displayName', async (_, body) => {
    const res = await t.post('/Groups', { schemas: [GROUP], ...body });
    expectScimError(res, 400, 'invalidValue');
    expect(res.body.detail).toMatch(/displayName/);
  });

  it('honours excludedAttributes=members on the 201', async () => {
    const res = await t
      .post('/Groups?excludedAttributes=members', { schemas: [GROUP], displayName: unique('Lean') })
      .expect(201);
    expect(res.body).not.toHaveProperty('members');
    expect(res.headers.location).toBe(res.body.meta.location);
  });
});

describe('GET /Groups/{id}', () => {
  let group: Json;
  let member: string;
  beforeAll(async () => {
    member = await createUser(t, { userName: unique('reader'), displayName: 'Reader' });
    group = await createGroup(t, {
      displayName: unique('Readable'),
      externalId: 'read-ext',
      members: [{ value: member }],
    });
  });

  it('returns the members by default and no members key with excludedAttributes=members', async () => {
    const full = await getGroup(t, group.id);
    expect(full.members).toEqual([
      { value: member, $ref: `${t.baseUrl}/Users/${member}`, display: 'Reader', type: 'User' },
    ]);
    const lean = (await t.get(`/Groups/${group.id}?excludedAttributes=members`).expect(200)).body;
    expect(lean).not.toHaveProperty('members');
    const { members: _members, ...rest } = full;
    expect(lean).toEqual(rest);
  });

  it('narrows members to a sub-attribute with attributes=members.value', async () => {
    const res = (await t.get(`/Groups/${group.id}?attributes=members.value`).expect(200)).body;
    expect(res.members).toEqual([{ value: member }]);
    expect(res).not.toHaveProperty('displayName');
  });

  it("derives a member's display from the user as it is now", async () => {
    const u = await createUser(t, { userName: unique('morph@corp.example'), displayName: 'Old Name' });
    const g = await createGroup(t, { displayName: unique('Derived'), members: [{ value: u }] });
    expect(g.members[0].display).toBe('Old Name');
    await t
      .patch(`/Users/${u}`, patchOp({ op: 'replace', path: 'displayName', value: 'New Name' }))
      .expect(200);
    expect((await getGroup(t, g.id)).members[0].display).toBe('New Name');
    await t.patch(`/Users/${u}`, patchOp({ op: 'remove', path: 'displayName' })).expect(200);
    const userName = (await t.get(`/Users/${u}`).expect(200)).body.userName;
    expect((await getGroup(t, g.id)).members[0].display).toBe(userName);
  });

  it('returns only what attributes=displayName asks for (plus id and schemas)', async () => {
    const res = (await t.get(`/Groups/${group.id}?attributes=displayName`).expect(200)).body;
    expect(res).toMatchObject({ schemas: [GROUP], id: group.id, displayName: group.displayName });
    expect(res).not.toHaveProperty('members');
    expect(res).not.toHaveProperty('externalId');
  });

  it.each([
    ['an unknown uuid', () => randomUUID()],
    ['a value that is not a uuid', () => 'not-a-uuid'],
    ['a user id', () => member],
  ])('answers 404 for %s', async (_, id) => {
    expectScimError(await t.get(`/Groups/${id()}`), 404);
  });

  it("never shows another organization's group", async () => {
    const other = await groupTenant();
    expectScimError(await other.get(`/Groups/${group.id}`), 404);
    expectScimError(
      await other.patch(`/Groups/${group.id}`, patchOp({ op: 'remove', path: 'members' })),
      404,
    );
    expectScimError(await other.put(`/Groups/${group.id}`, { displayName: 'stolen' }), 404);
    expectScimError(await other.delete(`/Groups/${group.id}`), 404);
    expect(await getGroup(t, group.id)).toEqual(group);
    expect(await memberIds(t, group.id)).toEqual([member]);
  });
});

describe('GET /Groups (list, filter, sort, paging)', () => {
  let L: Tenant;
  const NAMES = ['Engineering', 'Finance', 'Marketing', 'Operations', 'Sales'];
  const ids: Record<string, string> = {};
  let u1: string;
  let u2: string;
  let loner: string;

  beforeAll(async () => {
    L = await groupTenant();
    [u1, u2, loner] = await createUsers(L, 3);
    // Created in an order that differs from the alphabetical one.
    for (const name of ['Sales', 'Engineering', 'Operations', 'Finance', 'Marketing']) {
      const members =
        name === 'Finance' ? [{ value: u1 }, { value: u2 }] : name === 'Sales' ? [{ value: u1 }] : [];
      const externalId = name === 'Sales' || name === 'Marketing' ? 'ext-shared' : `ext-${name}`;
      ids[name] = (await createGroup(L, { displayName: name, externalId, members })).id;
    }
  });

  const list = async (query: string) => {
    const res = await L.get(`/Groups?${query}`).expect(200);
    expect(res.headers['content-type']).toBe(SCIM_JSON);
    expect(res.body.schemas).toEqual([LIST]);
    return res.body;
  };
  const filter = (f: string, extra = '') => list(`filter=${encodeURIComponent(f)}${extra}`);
  const names = (body: Json) => body.Resources.map((r: { displayName: string }) => r.displayName);

  it.each(['Finance', 'finance', 'FINANCE', 'fInAnCe'])(
    'finds displayName eq "%s" case-insensitively (validator 15, 17)',
    async (name) => {
      const body = await filter(`displayName eq "${name}"`);
      expect(body).toMatchObject({ totalResults: 1, startIndex: 1, itemsPerPage: 1 });
      expect(body.Resources[0]).toMatchObject({ id: ids.Finance, displayName: 'Finance' });
      expect(body.Resources[0].members.map((m: { value: string }) => m.value).sort()).toEqual(
        sorted([u1, u2]),
      );
    },
  );

  it('answers a filter that matches nothing with 200 and Resources: [] (validator 16)', async () => {
    expect(await filter('displayName eq "nonexistent group"')).toEqual({
      schemas: [LIST],
      totalResults: 0,
      startIndex: 1,
      itemsPerPage: 0,
      Resources: [],
    });
  });

  it('omits members from every listed group with excludedAttributes=members (Entra lookup, validator 14)', async () => {
    const one = await filter('displayName eq "finance"', '&excludedAttributes=members');
    expect(one.totalResults).toBe(1);
    expect(one.Resources[0]).not.toHaveProperty('members');
    expect(one.Resources[0]).toMatchObject({
      id: ids.Finance,
      displayName: 'Finance',
      externalId: 'ext-Finance',
    });
    const all = await list('excludedAttributes=members');
    expect(all.totalResults).toBe(5);
    for (const r of all.Resources) expect(r).not.toHaveProperty('members');
    const full = await list('');
    for (const r of full.Resources) expect(Array.isArray(r.members)).toBe(true);
  });

  it('filters on externalId eq', async () => {
    expect(names(await filter('externalId eq "ext-shared"', '&sortBy=displayName'))).toEqual([
      'Marketing',
      'Sales',
    ]);
    expect(names(await filter('externalId eq "ext-Operations"'))).toEqual(['Operations']);
    // externalId is caseExact (RFC 7643 §3.1); displayName is not.
    expect((await filter('externalId eq "EXT-SHARED"')).totalResults).toBe(0);
    expect(names(await filter('displayName sw "fin"'))).toEqual(['Finance']);
    expect(names(await filter('displayName co "KET"', '&sortBy=displayName'))).toEqual(['Marketing']);
  });

  it.each([
    ['members[value eq "<u>"]', (u: string) => `members[value eq "${u}"]`],
    ['members.value eq "<u>"', (u: string) => `members.value eq "${u}"`],
  ])('finds the groups of a member with %s', async (_, f) => {
    expect(names(await filter(f(u1), '&sortBy=displayName'))).toEqual(['Finance', 'Sales']);
    expect(names(await filter(f(u2)))).toEqual(['Finance']);
    expect((await filter(f(loner))).totalResults).toBe(0);
    expect((await filter(f(randomUUID()))).totalResults).toBe(0);
  });

  it('answers the Entra reference check id eq "<g>" and members[value eq "<u>"]', async () => {
    const yes = await filter(
      `id eq "${ids.Finance}" and members[value eq "${u2}"]`,
      '&excludedAttributes=members',
    );
    expect(yes.totalResults).toBe(1);
    expect(yes.Resources[0].id).toBe(ids.Finance);
    expect((await filter(`id eq "${ids.Sales}" and members[value eq "${u2}"]`)).totalResults).toBe(0);
  });

  it('sorts by displayName both ways', async () => {
    expect(names(await list('sortBy=displayName'))).toEqual(NAMES);
    expect(names(await list('sortBy=displayName&sortOrder=descending'))).toEqual([...NAMES].reverse());
  });

  it('pages with startIndex and count', async () => {
    const page = await list('sortBy=displayName&startIndex=2&count=2&excludedAttributes=members');
    expect(page).toMatchObject({ totalResults: 5, startIndex: 2, itemsPerPage: 2 });
    expect(names(page)).toEqual(['Finance', 'Marketing']);
    const past = await list('startIndex=9&count=2');
    expect(past).toMatchObject({ totalResults: 5, startIndex: 9, itemsPerPage: 0, Resources: [] });
  });

  it('walks every group once with a cursor (RFC 9865)', async () => {
    const seen: string[] = [];
    let body = await list('cursor&count=2&sortBy=displayName');
    for (let pages = 1; ; pages++) {
      expect(pages).toBeLessThanOrEqual(3);
      expect(body.totalResults).toBe(5);
      seen.push(...names(body));
      if (!body.nextCursor) break;
      body = await list(`count=2&sortBy=displayName&cursor=${encodeURIComponent(body.nextCursor)}`);
    }
    expect(seen).toEqual(NAMES);
    // The default order (creation) also visits every group once.
    const byCreation: string[] = [];
    let page = await list('cursor&count=3&excludedAttributes=members');
    byCreation.push(...names(page));
    while (page.nextCursor) {
      page = await list(`count=3&excludedAttributes=members&cursor=${encodeURIComponent(page.nextCursor)}`);
      byCreation.push(...names(page));
    }
    expect(byCreation).toEqual(['Sales', 'Engineering', 'Operations', 'Finance', 'Marketing']);
  });

  it('searches with POST /Groups/.search', async () => {
    const res = await L.post('/Groups/.search', {
      schemas: [SEARCH],
      filter: `members[value eq "${u1}"]`,
      sortBy: 'displayName',
      excludedAttributes: ['members'],
      startIndex: 1,
      count: 1,
    }).expect(200);
    expect(res.headers['content-type']).toBe(SCIM_JSON);
    expect(res.body).toMatchObject({ schemas: [LIST], totalResults: 2, startIndex: 1, itemsPerPage: 1 });
    expect(res.body.Resources).toHaveLength(1);
    expect(res.body.Resources[0]).toMatchObject({ id: ids.Finance, displayName: 'Finance' });
    expect(res.body.Resources[0]).not.toHaveProperty('members');
  });
});

describe('PUT /Groups/{id}', () => {
  it('replaces displayName, externalId (omitted → removed) and the whole member set', async () => {
    const [a, b, c] = await createUsers(t, 3);
    const group = await createGroup(t, {
      displayName: unique('Put before'),
      externalId: 'put-ext',
      members: [{ value: a }, { value: b }],
    });
    await new Promise((r) => setTimeout(r, 5));
    const name = unique('Put after');
    const res = await t
      .put(`/Groups/${group.id}`, {
        // Okta sends back what it read, read-only attributes included.
        schemas: [GROUP],
        id: group.id,
        meta: group.meta,
        displayName: name,
        members: [{ value: b }, { value: c, display: 'Cee' }],
      })
      .expect(200);
    expect(res.headers['content-type']).toBe(SCIM_JSON);
    expect(res.body).toMatchObject({ id: group.id, displayName: name });
    expect(res.body).not.toHaveProperty('externalId');
    expect(res.body.meta.created).toBe(group.meta.created);
    expect(res.body.meta.lastModified > group.meta.lastModified).toBe(true);
    const got = await getGroup(t, group.id);
    expect(got).toEqual(res.body);
    expect(await memberIds(t, group.id)).toEqual(sorted([b, c]));
    expect(got.members.find((m: { value: string }) => m.value === c).display).toBe('Cee');
  });

  it('empties the member set when members is omitted', async () => {
    const [a] = await createUsers(t, 1);
    const group = await createGroup(t, { displayName: unique('Put empty'), members: [{ value: a }] });
    await t.put(`/Groups/${group.id}`, { schemas: [GROUP], displayName: group.displayName }).expect(200);
    expect(await memberIds(t, group.id)).toEqual([]);
  });

  it('refuses a displayName another group has (409) and an unknown id (404), changing nothing', async () => {
    const taken = await createGroup(t, { displayName: unique('Put taken') });
    const group = await createGroup(t, { displayName: unique('Put keeper') });
    expectScimError(
      await t.put(`/Groups/${group.id}`, { displayName: taken.displayName.toUpperCase() }),
      409,
      'uniqueness',
    );
    expectScimError(await t.put(`/Groups/${randomUUID()}`, { displayName: unique('Nowhere') }), 404);
    expectScimError(await t.put(`/Groups/${group.id}`, { externalId: 'no name' }), 400, 'invalidValue');
    expect(await getGroup(t, group.id)).toEqual(group);
  });
});

describe('DELETE', () => {
  it.each(['deactivate', 'anonymize', 'delete'])(
    'removes a deleted user from every group (deprovisioning %s); the id cannot be added again; the groups stay',
    async (deprovisioning) => {
      const t = await groupTenant();
      await harness.http
        .patch(`/admin/v1/orgs/${t.orgId}`)
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
        .send({ deprovisioning })
        .expect(200);
      const [gone, stays] = await createUsers(t, 2);
      const g1 = await createGroup(t, {
        displayName: unique('Del one'),
        members: [{ value: gone }, { value: stays }],
      });
      const g2 = await createGroup(t, { displayName: unique('Del two'), members: [{ value: gone }] });
      await t.delete(`/Users/${gone}`).expect(204);
      expectScimError(await t.get(`/Users/${gone}`), 404);
      expect(await memberIds(t, g1.id)).toEqual([stays]);
      expect(await memberIds(t, g2.id)).toEqual([]);
      const filtered = (
        await t.get(`/Groups?filter=${encodeURIComponent(`members[value eq "${gone}"]`)}`).expect(200)
      ).body;
      expect(filtered.totalResults).toBe(0);

      for (const [label, res] of [
        [
          'PATCH add',
          await t.patch(
            `/Groups/${g2.id}`,
            patchOp({ op: 'add', path: 'members', value: [{ value: gone }] }),
          ),
        ],
        [
          'PATCH replace',
          await t.patch(
            `/Groups/${g1.id}`,
            patchOp({ op: 'replace', path: 'members', value: [{ value: gone }] }),
          ),
        ],
        ['PUT', await t.put(`/Groups/${g2.id}`, { displayName: g2.displayName, members: [{ value: gone }] })],
        ['POST', await t.post('/Groups', { displayName: unique('Del three'), members: [{ value: gone }] })],
      ] as const) {
        expect(res.status, label).toBe(400);
        expectScimError(res, 400, 'invalidValue');
        expect(res.body.detail, label).toContain(gone);
      }
      expect(await memberIds(t, g1.id)).toEqual([stays]);
      expect(await memberIds(t, g2.id)).toEqual([]);
      const stayer = (await t.get(`/Users/${stays}`).expect(200)).body;
      expect(stayer.groups.map((g: { value: string }) => g.value)).toEqual([g1.id]);
    },
  );

  it('deletes a group: 204 with no body, then GET 404 and DELETE 404; its users stay', async () => {
    const [a, b] = await createUsers(t, 2);
    const name = unique('Doomed');
    const group = await createGroup(t, { displayName: name, members: [{ value: a }, { value: b }] });
    const res = await t.delete(`/Groups/${group.id}`).expect(204);
    expect(res.text).toBe('');
    expectScimError(await t.get(`/Groups/${group.id}`), 404);
    expectScimError(await t.delete(`/Groups/${group.id}`), 404);
    expectScimError(await t.patch(`/Groups/${group.id}`, patchOp({ op: 'remove', path: 'members' })), 404);
    for (const id of [a, b]) {
      const user = (await t.get(`/Users/${id}`).expect(200)).body;
      expect(user.groups ?? []).toEqual([]);
    }
    // Its displayName is free again.
    await createGroup(t, { displayName: name.toUpperCase() });
  });

  it.each([
    ['an unknown uuid', () => randomUUID()],
    ['a value that is not a uuid', () => 'not-a-uuid'],
  ])('answers 404 to DELETE of %s', async (_, id) => {
    expectScimError(await t.delete(`/Groups/${id()}`), 404);
  });
});

describe('malformed requests get 400, never 500', () => {
  let group: Json;
  let member: string;
  beforeAll(async () => {
    member = await createUser(t);
    group = await createGroup(t, { displayName: unique('Sturdy'), members: [{ value: member }] });
  });

  it.each<[string, unknown]>([
    ['members as a string', { displayName: 'm1', members: 'not-an-array' }],
    ['members as numbers', { displayName: 'm2', members: [1, 2] }],
    ['members as nested arrays', { displayName: 'm3', members: [['x']] }],
    ['a member value that is a number', { displayName: 'm4', members: [{ value: 5 }] }],
    ['a member without value', { displayName: 'm5', members: [{ display: 'nobody' }] }],
    ['a member that is null', { displayName: 'm7', members: [null] }],
    ['a displayName that is a number', { displayName: 42 }],
    ['a displayName that is an object', { displayName: { value: 'x' } }],
    ['schemas as a string', { schemas: GROUP, displayName: 'm9' }],
    ['an array body', [{ displayName: 'm10' }]],
    ['a string body', 'displayName'],
  ])('POST /Groups with %s', async (_, body) => {
    const res = await t.post('/Groups', body);
    expectScimError(res, 400);
    expect(['invalidValue', 'invalidSyntax']).toContain(res.body.scimType);
  });

  it('POST /Groups with malformed JSON → 400 invalidSyntax', async () => {
    const res = await harness.http
      .post(`${t.basePath}/Groups`)
      .set('Authorization', `Bearer ${t.token}`)
      .set('Content-Type', SCIM_JSON)
      .send('{"displayName": "half');
    expectScimError(res, 400, 'invalidSyntax');
  });

  it.each<[string, unknown]>([
    ['members as a string', { displayName: 'p1', members: 'not-an-array' }],
    ['a member value that is a number', { displayName: 'p2', members: [{ value: 5 }] }],
    ['no displayName', { members: [] }],
  ])('PUT /Groups/{id} with %s', async (_, body) => {
    const res = await t.put(`/Groups/${group.id}`, body);
    expectScimError(res, 400);
    expect(await getGroup(t, group.id)).toEqual(group);
  });

  it.each<[string, unknown]>([
    ['no Operations', { schemas: [PATCH_OP] }],
    ['Operations as an object', { schemas: [PATCH_OP], Operations: { op: 'add' } }],
    ['Operations of strings', { schemas: [PATCH_OP], Operations: ['add'] }],
    ['an unknown op', patchOp({ op: 'move', path: 'members', value: [] })],
    ['no op', patchOp({ path: 'members', value: [] })],
    ['a path that is a number', patchOp({ op: 'add', path: 42, value: 'x' })],
    ['path members[broken', patchOp({ op: 'remove', path: 'members[broken' })],
    ['path members[value eq', patchOp({ op: 'remove', path: 'members[value eq' })],
    ['path members[value eq "x"', patchOp({ op: 'remove', path: 'members[value eq "x"' })],
    ['path members]', patchOp({ op: 'remove', path: 'members]' })],
    ['an unknown path', patchOp({ op: 'add', path: 'nosuch', value: 'x' })],
    ['a filter on an unknown sub-attribute', patchOp({ op: 'remove', path: 'members[nosuch eq "x"]' })],
    [
      'add with a filtered members path',
      patchOp({ op: 'add', path: `members[value eq "${randomUUID()}"]`, value: {} }),
    ],
    ['members value a number', patchOp({ op: 'add', path: 'members', value: 5 })],
    [
      'members value entries with a numeric value',
      patchOp({ op: 'add', path: 'members', value: [{ value: 5 }] }),
    ],
    ['members value nested arrays', patchOp({ op: 'add', path: 'members', value: [[{ value: 'x' }]] })],
    ['members value an empty object', patchOp({ op: 'add', path: 'members', value: {} })],
    ['members value [null]', patchOp({ op: 'add', path: 'members', value: [null] })],
    ['replace members with booleans', patchOp({ op: 'replace', path: 'members', value: [true] })],
    ['pathless replace with a string value', patchOp({ op: 'replace', value: 'x' })],
    ['pathless replace with members as a string', patchOp({ op: 'replace', value: { members: 'x' } })],
    ['pathless remove', patchOp({ op: 'remove' })],
    ['displayName as a number', patchOp({ op: 'replace', path: 'displayName', value: 42 })],
    ['removing displayName', patchOp({ op: 'remove', path: 'displayName' })],
    ['replacing displayName with null', patchOp({ op: 'replace', path: 'displayName', value: null })],
    ['an array body', [{ op: 'remove', path: 'members' }]],
  ])('PATCH /Groups/{id} with %s', async (_, body) => {
    const res = await t.patch(`/Groups/${group.id}`, body);
    expectScimError(res, 400);
    expect(await getGroup(t, group.id)).toEqual(group);
  });

  // Debatable shapes: an element whose only key is null or unknown prunes to nothing (RFC 7643 §2.5:
  // null is unassigned), so no member is written. 201 without members or 400 are both fine; 500 is not.
  it.each<[string, unknown]>([
    ['a member value of null', { members: [{ value: null }] }],
    ['members as an object of objects', { members: { a: { value: 'x' } } }],
  ])('POST /Groups with %s: 201 without members, or 400', async (_, body) => {
    const res = await t.post('/Groups', { displayName: unique('Odd'), ...(body as object) });
    expect([201, 400], res.text).toContain(res.status);
    if (res.status === 400) expectScimError(res, 400);
    else expect(await memberIds(t, res.body.id)).toEqual([]);
  });

  // Not malformed, only odd: whatever the answer, it is not a 500 and, as nothing matches, no member goes.
  it.each<[string, unknown]>([
    [
      'remove members[value eq "not-a-uuid"]',
      patchOp({ op: 'remove', path: 'members[value eq "not-a-uuid"]' }),
    ],
    ['remove members[value eq 5]', patchOp({ op: 'remove', path: 'members[value eq 5]' })],
    ['remove members[value lt "0"]', patchOp({ op: 'remove', path: 'members[value lt "0"]' })],
    ['remove members[display co "zzz"]', patchOp({ op: 'remove', path: 'members[display co "zzz"]' })],
    ['remove members[type eq "Group"]', patchOp({ op: 'remove', path: 'members[type eq "Group"]' })],
    [
      'remove members with a value list of numbers',
      patchOp({ op: 'remove', path: 'members', value: [5, { value: 6 }] }),
    ],
  ])('PATCH /Groups/{id} with %s: 204 or 400, membership unchanged', async (_, body) => {
    const own = await createGroup(t, {
      displayName: unique('Odd patch'),
      members: [{ value: member, display: 'kept' }],
    });
    const res = await t.patch(`/Groups/${own.id}`, body);
    expect([204, 400], res.text).toContain(res.status);
    if (res.status === 400) expectScimError(res, 400);
    expect(await getGroup(t, own.id)).toEqual(own);
  });

  it.each([
    'members[value eq "not-a-uuid"]',
    'members.value eq "not-a-uuid"',
    'members[value eq 5]',
    'id eq "not-a-uuid"',
    'members[value gt "a"]',
    'members[value pr]',
    'members[display sw "x"]',
    'members[type eq "User"]',
    'members pr',
  ])('GET /Groups?filter=%s answers 200 or 400', async (f) => {
    const res = await t.get(`/Groups?filter=${encodeURIComponent(f)}&excludedAttributes=members`);
    expect([200, 400], res.text).toContain(res.status);
    expect(res.headers['content-type']).toBe(SCIM_JSON);
    if (res.status === 400) expectScimError(res, 400);
  });
});
