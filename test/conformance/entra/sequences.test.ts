// The request sequences of Microsoft Entra ID's provisioning service, in the default PATCH dialect and with `?aadOptscim062020` in the Tenant URL: Test Connection,
// a user from matching to hard delete over several cycles, and a group from matching to delete. Each
// lifecycle is one test whose steps build on the ones before them, as a provisioning job does.
import { randomUUID } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { useLiveServer } from '../live-server.js';
import { sequence } from '../sequence.js';
import {
  dialect,
  ENTERPRISE,
  type EntraClient,
  entraClient,
  expectEmptyList,
  expectEntraReplies,
  expectScimError,
  formEncode,
  GROUP,
  getGroup,
  getUser,
  type Json,
  LIST,
  MANAGER,
  MODES,
  MS_GROUP,
  patchGroup,
  patchUser,
  type Reply,
  SCIM_JSON,
  USER,
} from './entra-client.js';

const live = useLiveServer();

/** `GET /{type}?filter=…` as Entra encodes it: `filter=userName+eq+%22ana%40corp.example%22`. */
const filterQuery = (filter: string) => `filter=${formEncode(filter)}`;

/** A ListResponse holding exactly one resource. */
function expectOne(reply: Reply): Json {
  expect(reply.status, reply.text).toBe(200);
  expect(reply.body.schemas).toEqual([LIST]);
  expect(reply.body.totalResults).toBe(1);
  expect(reply.body.Resources).toHaveLength(1);
  return reply.body.Resources[0];
}

const byValue = (a: { value: string }, b: { value: string }) => a.value.localeCompare(b.value);

describe.each(MODES)('Entra provisioning, %s mode', (mode) => {
  const d = dialect(mode);
  let c: EntraClient;
  let token: string;

  beforeAll(async () => {
    const tenant = await live.newTenant();
    token = tenant.token;
    c = entraClient(mode, tenant.baseUrl, tenant.token);
  });
  afterEach(() => expectEntraReplies(c));

  describe('Test Connection', () => {
    it('GET /Users?filter=userName eq "<random guid>" without Content-Type, Accept or User-Agent → 200, empty ListResponse', async () => {
      const res = await c.send('GET', `/Users?filter=userName+eq+%22${randomUUID()}%22`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      // Only these went out (Node adds `Connection: close` on the wire): no Content-Type, Accept or User-Agent.
      expect(Object.keys(res.sent).sort()).toEqual(['authorization', 'host']);
      expect(res.headers['content-type']).toBe(SCIM_JSON);
      expectEmptyList(res);
    });

    it('the other probes answer without Accept: discovery, and a random group by displayName excluding members', async () => {
      const bare = { headers: { Authorization: `Bearer ${token}` } };
      const spc = await c.send('GET', '/ServiceProviderConfig', bare);
      expect(spc.status, spc.text).toBe(200);
      expect(spc.body.patch).toEqual({ supported: true });
      for (const path of ['/Schemas', '/ResourceTypes']) {
        const res = await c.send('GET', path, bare);
        expect(res.status, res.text).toBe(200);
        expect(res.body.schemas).toEqual([LIST]);
      }
      const schemas = await c.send('GET', '/Schemas', bare);
      expect(schemas.body.Resources.map((s: Json) => s.id)).toEqual(expect.arrayContaining([USER, GROUP]));
      const group = await c.send(
        'GET',
        `/Groups?excludedAttributes=members&${filterQuery(`displayName eq "${randomUUID()}"`)}`,
        bare,
      );
      expectEmptyList(group);
    });
  });

  describe('user lifecycle', () => {
    const { step, run } = sequence();
    const userName = `Ana.Ruiz.${mode}@Corp.example`;
    const externalId = randomUUID();
    let id: string;
    let created: Json;

    step('cycle 1: no user matches the userName, nor the externalId', async () => {
      expectEmptyList(await c.get(`/Users?${filterQuery(`userName eq "${userName}"`)}`));
      expectEmptyList(await c.get(`/Users?${filterQuery(`externalId eq "${externalId}"`)}`));
    });

    step('cycle 1: POST /Users (nulls, meta, empty roles) → 201 with the id Entra caches', async () => {
      const res = await c.post('/Users', {
        schemas: [USER, ENTERPRISE],
        externalId,
        userName,
        active: d.bool(true),
        displayName: 'Ana Ruiz',
        emails: [{ primary: true, type: 'work', value: 'ana.ruiz@corp.example' }],
        name: { formatted: 'Ana Ruiz', familyName: 'Ruiz', givenName: 'Ana' },
        phoneNumbers: null,
        addresses: null,
        title: null,
        meta: { resourceType: 'User' },
        roles: [],
        [ENTERPRISE]: { department: 'Sales', manager: null },
      });
      expect(res.status, res.text).toBe(201);
      created = res.body;
      id = created.id;
      expect(id).toMatch(/\S/);
      expect(created).toEqual({
        schemas: [USER, ENTERPRISE],
        id,
        externalId,
        userName,
        active: true,
        displayName: 'Ana Ruiz',
        emails: [{ primary: true, type: 'work', value: 'ana.ruiz@corp.example' }],
        name: { formatted: 'Ana Ruiz', familyName: 'Ruiz', givenName: 'Ana' },
        [ENTERPRISE]: { department: 'Sales' },
        meta: {
          resourceType: 'User',
          created: expect.any(String),
          lastModified: created.meta.created,
          location: `${c.baseUrl}/Users/${id}`,
        },
      });
      expect(res.headers.location).toBe(created.meta.location);
    });

    step('cycle 2: the userName matches (in any case) and the cached id is read back', async () => {
      expect(expectOne(await c.get(`/Users?${filterQuery(`userName eq "${userName}"`)}`))).toEqual(created);
      expect(
        expectOne(await c.get(`/Users?${filterQuery(`userName eq "${userName.toLowerCase()}"`)}`)),
      ).toEqual(created);
      expect(expectOne(await c.get(`/Users?${filterQuery(`externalId eq "${externalId}"`)}`)).id).toBe(id);
      expect(await getUser(c, id)).toEqual(created);
    });

    step(
      'cycle 2: PATCH the changed attributes (work email, family name, work address, department, nickName)',
      async () => {
        const operations = [
          ...d.update('replace', {
            'emails[type eq "work"].value': 'ana.r@corp.example',
            'name.familyName': 'Ruiz-Lopez',
            // No work address yet: Entra expects the element to be created.
            'addresses[type eq "work"].streetAddress': '12 Quay St',
          }),
          // Entra adds single-valued attributes.
          ...d.update('add', { [`${ENTERPRISE}:department`]: 'Retail', nickName: 'Ani' }),
        ];
        expect(operations).toHaveLength(mode === 'flag' ? 4 : 5);
        const user = await patchUser(c, id, operations);
        expect(user).toEqual({
          ...created,
          emails: [{ primary: true, type: 'work', value: 'ana.r@corp.example' }],
          name: { formatted: 'Ana Ruiz', familyName: 'Ruiz-Lopez', givenName: 'Ana' },
          addresses: [{ type: 'work', streetAddress: '12 Quay St' }],
          nickName: 'Ani',
          [ENTERPRISE]: { department: 'Retail' },
          meta: { ...created.meta, lastModified: expect.any(String) },
        });
        expect(Date.parse(user.meta.lastModified)).toBeGreaterThan(Date.parse(created.meta.lastModified));
        created = user;
      },
    );

    step('the manager is written in an extra update once the referenced user exists', async () => {
      const managerName = `Marta.Vidal.${mode}@Corp.example`;
      expectEmptyList(await c.get(`/Users?${filterQuery(`userName eq "${managerName}"`)}`));
      const res = await c.post('/Users', {
        schemas: [USER],
        externalId: randomUUID(),
        userName: managerName,
        active: d.bool(true),
        displayName: 'Marta Vidal',
      });
      expect(res.status, res.text).toBe(201);
      const managerId = res.body.id;
      const user = await patchUser(c, id, d.update('add', { [MANAGER]: managerId }));
      expect(user[ENTERPRISE]).toEqual({ department: 'Retail', manager: { value: managerId } });
      created = user;
    });

    step('soft delete: PATCH active false; the user stays visible by id and by filter', async () => {
      const user = await patchUser(c, id, [{ op: d.op('replace'), path: 'active', value: d.bool(false) }]);
      expect(user).toEqual({
        ...created,
        active: false,
        meta: { ...created.meta, lastModified: expect.any(String) },
      });
      expect(expectOne(await c.get(`/Users?${filterQuery(`userName eq "${userName}"`)}`))).toEqual(user);
      expect(expectOne(await c.get(`/Users?${filterQuery(`externalId eq "${externalId}"`)}`))).toEqual(user);
      const inactive = expectOne(
        await c.get(`/Users?${filterQuery(`userName eq "${userName}" and active eq false`)}`),
      );
      expect(inactive.active).toBe(false);
      created = user;
    });

    step('restore: PATCH active true', async () => {
      const user = await patchUser(c, id, [{ op: d.op('replace'), path: 'active', value: d.bool(true) }]);
      expect(user.active).toBe(true);
      expect(expectOne(await c.get(`/Users?${filterQuery(`userName eq "${userName}"`)}`)).active).toBe(true);
    });

    step('hard delete: DELETE → 204, then GET → 404 and DELETE → 404', async () => {
      const res = await c.delete(`/Users/${id}`);
      expect(res.status, res.text).toBe(204);
      expect(res.text).toBe('');
      expectScimError(await c.get(`/Users/${id}`), 404);
      expectScimError(await c.delete(`/Users/${id}`), 404);
      expectEmptyList(await c.get(`/Users?${filterQuery(`userName eq "${userName}"`)}`));
    });

    it('runs from matching to hard delete, step by step', run);
  });

  describe('group lifecycle', () => {
    const { step, run } = sequence();
    const match = (displayName: string) =>
      c.get(`/Groups?excludedAttributes=members&${filterQuery(`displayName eq "${displayName}"`)}`);
    const externalId = randomUUID();
    let id: string;
    let created: Json;
    const members: Json[] = [];

    step(
      'GET /Groups?excludedAttributes=members&filter=displayName+eq+%22Finance%22 → no match',
      async () => {
        const res = await match('Finance');
        expect(res.target).toMatch(
          /\/Groups\?excludedAttributes=members&filter=displayName\+eq\+%22Finance%22/,
        );
        expectEmptyList(res);
      },
    );

    step('POST /Groups without members, with the Microsoft schema URN and meta → 201', async () => {
      const res = await c.post('/Groups', {
        schemas: [GROUP, MS_GROUP],
        externalId,
        displayName: 'Finance',
        meta: { resourceType: 'Group' },
      });
      expect(res.status, res.text).toBe(201);
      created = res.body;
      id = created.id;
      expect(id).toMatch(/\S/);
      expect(created).toEqual({
        schemas: [GROUP],
        id,
        externalId,
        displayName: 'Finance',
        members: [],
        meta: {
          resourceType: 'Group',
          created: expect.any(String),
          lastModified: created.meta.created,
          location: `${c.baseUrl}/Groups/${id}`,
        },
      });
      expect(res.headers.location).toBe(created.meta.location);
      const { members: _none, ...lean } = created;
      expect(expectOne(await match('Finance'))).toEqual(lean);
    });

    step('PATCH Add members, several in one operation, each {"$ref": null, "value": id}', async () => {
      for (const name of ['Bo Lind', 'Cy Moor', 'Di Nash']) {
        const res = await c.post('/Users', {
          schemas: [USER],
          externalId: randomUUID(),
          userName: `${name.replace(' ', '.')}.${mode}@corp.example`,
          active: d.bool(true),
          displayName: name,
        });
        expect(res.status, res.text).toBe(201);
        members.push({
          value: res.body.id,
          $ref: `${c.baseUrl}/Users/${res.body.id}`,
          display: name,
          type: 'User',
        });
      }
      const operations = d.addMembers(members.map((m) => m.value));
      expect(operations).toHaveLength(1);
      await patchGroup(c, id, operations);
      const group = await getGroup(c, id);
      expect([...group.members].sort(byValue)).toEqual([...members].sort(byValue));
    });

    step(
      `PATCH Remove one member (${mode === 'flag' ? 'members[value eq "id"]' : 'Remove members with a value list'}): only it leaves`,
      async () => {
        const [leaving, ...staying] = members;
        await patchGroup(c, id, d.removeMembers([leaving.value]));
        const group = await getGroup(c, id);
        expect([...group.members].sort(byValue)).toEqual([...staying].sort(byValue));
        const left = await c.get(`/Users/${leaving.value}`);
        expect(left.status).toBe(200);
        expect(left.body.groups).toBeUndefined();
      },
    );

    step('PATCH Add externalId (a single-valued attribute, as Entra adds it)', async () => {
      const next = randomUUID();
      await patchGroup(c, id, d.update('add', { externalId: next }));
      expect((await getGroup(c, id, '?excludedAttributes=members')).externalId).toBe(next);
    });

    step(`rename: ${mode === 'flag' ? 'pathless replace' : 'Replace displayName'}`, async () => {
      const operations = d.update('replace', { displayName: 'Finance EMEA' });
      expect(operations).toEqual([
        mode === 'flag'
          ? { op: 'replace', value: { displayName: 'Finance EMEA' } }
          : { op: 'Replace', path: 'displayName', value: 'Finance EMEA' },
      ]);
      await patchGroup(c, id, operations);
      expectEmptyList(await match('Finance'));
      expect(expectOne(await match('Finance EMEA')).id).toBe(id);
    });

    step('GET /Groups/{id}?excludedAttributes=members → no members key', async () => {
      const group = await getGroup(c, id, '?excludedAttributes=members');
      expect(Object.keys(group)).not.toContain('members');
      expect(group).toEqual({
        schemas: [GROUP],
        id,
        externalId: expect.any(String),
        displayName: 'Finance EMEA',
        meta: { ...created.meta, lastModified: expect.any(String) },
      });
      // Without the exclusion the two members who stayed are still there.
      expect((await getGroup(c, id)).members).toHaveLength(2);
    });

    step('DELETE /Groups/{id} → 204, then GET → 404', async () => {
      const res = await c.delete(`/Groups/${id}`);
      expect(res.status, res.text).toBe(204);
      expect(res.text).toBe('');
      expectScimError(await c.get(`/Groups/${id}`), 404);
      expectEmptyList(await match('Finance EMEA'));
    });

    it('runs from matching to delete, step by step', run);
  });
});
