// The Microsoft Entra SCIM Validator (scimvalidator.microsoft.com), re-expressed: its 24 core tests and
// 7 preview tests, each sending what the validator sends and checking what it checks, including its follow-up requests. The whole set runs twice, in Entra's default PATCH
// dialect and with `?aadOptscim062020` in the Tenant URL, each on its own organization.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { useLiveServer } from '../live-server.js';
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
  type Json,
  LIST,
  MANAGER,
  MODES,
  patchGroup,
  patchUser,
  type Reply,
  USER,
} from './entra-client.js';

const live = useLiveServer();

let seq = 0;
/** A suffix no other resource of the run has (userName and displayName are unique per organization). */
const unique = () => `${++seq}${randomBytes(3).toString('hex')}`;

/** The query the validator writes: `filter=userName+eq+"garry%40kemmerstark.com"`. */
const filterQuery = (filter: string) => `filter=${formEncode(filter, { rawQuotes: true })}`;

/** A user with the validator's default attributes; `primary` arrives as the string "true". */
function validatorUser(): Json {
  const id = unique();
  return {
    schemas: [USER, ENTERPRISE],
    userName: `Garry.Kemmer${id}@KemmerStark.com`,
    externalId: `ext-${id}`,
    active: true,
    displayName: `Garry Kemmer ${id}`,
    nickName: 'Gar',
    profileUrl: `https://profiles.kemmerstark.example/${id}`,
    title: 'Regional Manager',
    userType: 'Employee',
    preferredLanguage: 'en-US',
    locale: 'en-US',
    timezone: 'America/Los_Angeles',
    name: {
      formatted: `Mr. Garry J Kemmer III`,
      familyName: 'Kemmer',
      givenName: 'Garry',
      middleName: 'J',
      honorificPrefix: 'Mr.',
      honorificSuffix: 'III',
    },
    emails: [{ type: 'work', value: `garry.kemmer${id}@kemmerstark.example`, primary: 'true' }],
    phoneNumbers: [{ type: 'work', value: '+1 (555) 010-0199', primary: 'true' }],
    addresses: [
      {
        type: 'work',
        formatted: '100 Main St, Springfield, IL 62701, US',
        streetAddress: '100 Main St',
        locality: 'Springfield',
        region: 'IL',
        postalCode: '62701',
        country: 'US',
        primary: 'true',
      },
    ],
    [ENTERPRISE]: {
      employeeNumber: id,
      department: 'Sales',
      costCenter: 'CC-7',
      organization: 'Kemmer Stark',
    },
  };
}

/** The validator's group: core schema only, externalId and displayName. */
const validatorGroup = () => {
  const id = unique();
  return { schemas: [GROUP], externalId: `ext-${id}`, displayName: `Sales Team ${id}` };
};

/** The list-response checks of "Filter for an existing …": schema, counts, and exactly these resources. */
function expectListOf(reply: Reply, resources: Json[]): void {
  expect(reply.status, reply.text).toBe(200);
  expect(reply.body.schemas).toEqual([LIST]);
  expect(reply.body.totalResults).toBe(resources.length);
  expect(reply.body.startIndex).toBe(1);
  expect(reply.body.itemsPerPage).toBe(resources.length);
  expect(reply.body.Resources).toEqual(resources);
}

describe.each(MODES)('Entra SCIM Validator, %s mode', (mode) => {
  const d = dialect(mode);
  let c: EntraClient;

  beforeAll(async () => {
    const tenant = await live.newTenant();
    c = entraClient(mode, tenant.baseUrl, tenant.token);
  });
  afterEach(() => expectEntraReplies(c));

  /** The validator reads the group back after each group PATCH. */
  const patchGroupAndRead = async (id: string, operations: Parameters<EntraClient['patch']>[1]) => {
    await patchGroup(c, id, operations);
    return getGroup(c, id);
  };

  async function createUser(body: Json): Promise<Json> {
    const res = await c.post('/Users', body);
    expect(res.status, res.text).toBe(201);
    return res.body;
  }

  async function createGroup(body: Json): Promise<Json> {
    const res = await c.post('/Groups', body);
    expect(res.status, res.text).toBe(201);
    return res.body;
  }

  /** A group test's member: the validator names them `member_…`. */
  const createMember = () => {
    const id = unique();
    return createUser({
      schemas: [USER],
      userName: `member_${id}`,
      displayName: `Member ${id}`,
      active: true,
    });
  };

  const memberOf = (user: Json) => ({
    value: user.id,
    $ref: `${c.baseUrl}/Users/${user.id}`,
    display: user.displayName,
    type: 'User',
  });

  describe('core tests', () => {
    it('POST /Users — Create a new User', async () => {
      const managerId = randomUUID();
      const sent = validatorUser();
      sent.roles = [
        { primary: 'True', type: 'WindowsAzureActiveDirectoryRole', display: 'Admin', value: 'admin' },
      ];
      sent[ENTERPRISE].manager = { value: managerId };

      const res = await c.post('/Users', sent);
      expect(res.status, res.text).toBe(201);
      const created = res.body;
      expect(created.id).toMatch(/\S/);
      expect(created.schemas).toEqual([USER, ENTERPRISE]);
      for (const key of [
        'userName',
        'externalId',
        'displayName',
        'nickName',
        'profileUrl',
        'title',
        'userType',
        'preferredLanguage',
        'locale',
        'timezone',
        'name',
      ])
        expect(created[key], key).toEqual(sent[key]);
      expect(created.active).toBe(true);
      expect(created.emails).toEqual([{ ...sent.emails[0], primary: true }]);
      expect(created.phoneNumbers).toEqual([{ ...sent.phoneNumbers[0], primary: true }]);
      expect(created.addresses).toEqual([{ ...sent.addresses[0], primary: true }]);
      expect(created.roles).toEqual([{ ...sent.roles[0], primary: true }]);
      expect(created[ENTERPRISE]).toEqual(sent[ENTERPRISE]);
      expect(created.meta).toMatchObject({
        resourceType: 'User',
        location: `${c.baseUrl}/Users/${created.id}`,
      });
      expect(res.headers.location).toBe(created.meta.location);

      // Verify: the validator finds the user by its userName and compares it with what it created.
      const found = await c.get(`/Users?${filterQuery(`userName eq "${sent.userName}"`)}`);
      expectListOf(found, [created]);
    });

    it('POST /Users — Create a duplicate User', async () => {
      const sent = validatorUser();
      await createUser(sent);
      const again = await c.post('/Users', { ...validatorUser(), userName: sent.userName });
      expectScimError(again, 409, 'uniqueness');
    });

    it('Get /Users filter — Filter for an existing user', async () => {
      const created = await createUser(validatorUser());
      await createUser(validatorUser()); // another user the filter must leave out
      const res = await c.get(`/Users?${filterQuery(`userName eq "${created.userName}"`)}`);
      expectListOf(res, [created]);
      const [user] = res.body.Resources;
      // "all the required fields for Users" and "serialized to SCIM2 Core User".
      expect(user.schemas).toContain(USER);
      expect(user.id).toBe(created.id);
      expect(user.userName).toBe(created.userName);
      expect(user.meta.resourceType).toBe('User');
    });

    it('Get /Users filter — Filter for a non-existing user', async () => {
      const res = await c.get(
        `/Users?${filterQuery(`userName eq "nonexistent${unique()}@kemmerstark.example"`)}`,
      );
      expectEmptyList(res);
    });

    it('Get /Users filter — Filter for an existing user with a different case', async () => {
      const created = await createUser(validatorUser());
      const upper = created.userName.toUpperCase();
      expect(upper).not.toBe(created.userName);
      const res = await c.get(`/Users?${filterQuery(`userName eq "${upper}"`)}`);
      expect(res.target).toContain('%40KEMMERSTARK.COM');
      expectListOf(res, [created]);
    });

    it('PATCH /Users/Id — Patch User - Replace Attributes', async () => {
      const created = await createUser(validatorUser());
      const id = unique();
      const changes = {
        'emails[primary eq true].value': `new.${id}@kemmerstark.example`,
        'phoneNumbers[primary eq true].value': '+1 (555) 010-0200',
        'addresses[primary eq true].formatted': '200 Oak Ave, Shelbyville, OR 97001, CA',
        'addresses[primary eq true].streetAddress': '200 Oak Ave',
        'addresses[primary eq true].locality': 'Shelbyville',
        'addresses[primary eq true].region': 'OR',
        'addresses[primary eq true].postalCode': '97001',
        'addresses[primary eq true].country': 'CA',
        externalId: `new-ext-${id}`,
        'name.formatted': 'Dr. Anne K Rowe Jr.',
        'name.familyName': 'Rowe',
        'name.givenName': 'Anne',
        'name.middleName': 'K',
        'name.honorificPrefix': 'Dr.',
        'name.honorificSuffix': 'Jr.',
        displayName: `Anne Rowe ${id}`,
        nickName: 'Annie',
        profileUrl: `https://profiles.kemmerstark.example/anne-${id}`,
        title: 'Director',
        userType: 'Contractor',
        preferredLanguage: 'fr-CA',
        locale: 'fr-CA',
        timezone: 'America/Toronto',
        active: d.bool(false),
        [`${ENTERPRISE}:department`]: 'Research',
        [`${ENTERPRISE}:employeeNumber`]: `N-${id}`,
      };
      const ops = d.update('replace', changes);
      if (mode === 'flag') {
        expect(ops).toHaveLength(9); // eight filtered paths, then one merged pathless replace
        expect(ops[8]!.path).toBeUndefined();
      } else {
        expect(ops).toHaveLength(Object.keys(changes).length);
      }

      const user = await patchUser(c, created.id, ops);
      expect(user.emails).toEqual([{ type: 'work', value: `new.${id}@kemmerstark.example`, primary: true }]);
      expect(user.phoneNumbers).toEqual([{ type: 'work', value: '+1 (555) 010-0200', primary: true }]);
      expect(user.addresses).toEqual([
        {
          type: 'work',
          formatted: '200 Oak Ave, Shelbyville, OR 97001, CA',
          streetAddress: '200 Oak Ave',
          locality: 'Shelbyville',
          region: 'OR',
          postalCode: '97001',
          country: 'CA',
          primary: true,
        },
      ]);
      expect(user.externalId).toBe(`new-ext-${id}`);
      expect(user.name).toEqual({
        formatted: 'Dr. Anne K Rowe Jr.',
        familyName: 'Rowe',
        givenName: 'Anne',
        middleName: 'K',
        honorificPrefix: 'Dr.',
        honorificSuffix: 'Jr.',
      });
      expect(user.displayName).toBe(`Anne Rowe ${id}`);
      expect(user.nickName).toBe('Annie');
      expect(user.profileUrl).toBe(`https://profiles.kemmerstark.example/anne-${id}`);
      expect(user.title).toBe('Director');
      expect(user.userType).toBe('Contractor');
      expect(user.preferredLanguage).toBe('fr-CA');
      expect(user.locale).toBe('fr-CA');
      expect(user.timezone).toBe('America/Toronto');
      expect(user.active).toBe(false);
      expect(user[ENTERPRISE]).toEqual({
        ...created[ENTERPRISE],
        department: 'Research',
        employeeNumber: `N-${id}`,
      });
      expect(user.userName).toBe(created.userName);
    });

    it('PATCH /Users/Id — Update User userName', async () => {
      const created = await createUser(validatorUser());
      const userName = `Renamed.${unique()}@KemmerStark.com`;
      const user = await patchUser(c, created.id, d.update('replace', { userName }));
      expect(user.userName).toBe(userName);
      const byNew = await c.get(`/Users?${filterQuery(`userName eq "${userName}"`)}`);
      expectListOf(byNew, [user]);
      const byOld = await c.get(`/Users?${filterQuery(`userName eq "${created.userName}"`)}`);
      expectEmptyList(byOld);
    });

    it('PATCH /Users/Id — Patch User - Disable User', async () => {
      const created = await createUser(validatorUser());
      expect(created.active).toBe(true);
      const user = await patchUser(c, created.id, [
        { op: d.op('replace'), path: 'active', value: d.bool(false) },
      ]);
      // "Response from a GET and filter request on a disabled User should have attribute active".
      expect(user.active).toBe(false);
      const found = await c.get(`/Users?${filterQuery(`userName eq "${created.userName}"`)}`);
      expectListOf(found, [user]);
      expect(found.body.Resources[0].active).toBe(false);
    });

    it('PATCH /Users/Id — Patch User - Add Manager', async () => {
      const manager = await createUser(validatorUser());
      const created = await createUser(validatorUser());
      expect(created[ENTERPRISE].manager).toBeUndefined();
      const user = await patchUser(c, created.id, [{ op: d.op('add'), path: MANAGER, value: manager.id }]);
      expect(user[ENTERPRISE]).toEqual({ ...created[ENTERPRISE], manager: { value: manager.id } });
    });

    it('PATCH /Users/Id — Patch User - Replace Manager', async () => {
      const first = await createUser(validatorUser());
      const second = await createUser(validatorUser());
      const sent = validatorUser();
      sent[ENTERPRISE].manager = { value: first.id };
      const created = await createUser(sent);
      expect(created[ENTERPRISE].manager).toEqual({ value: first.id });
      const user = await patchUser(c, created.id, [{ op: d.op('replace'), path: MANAGER, value: second.id }]);
      expect(user[ENTERPRISE]).toEqual({ ...created[ENTERPRISE], manager: { value: second.id } });
    });

    it('PATCH /Users/Id — Patch User - Remove Manager', async () => {
      const manager = await createUser(validatorUser());
      const sent = validatorUser();
      sent[ENTERPRISE].manager = { value: manager.id };
      const created = await createUser(sent);
      expect(created[ENTERPRISE].manager).toEqual({ value: manager.id });
      // The validator removes the manager by replacing it with an empty string.
      const user = await patchUser(c, created.id, [{ op: d.op('replace'), path: MANAGER, value: '' }]);
      const { manager: _removed, ...rest } = created[ENTERPRISE];
      expect(user[ENTERPRISE]).toEqual(rest);
    });

    it('DELETE /Users/Id — Delete a User', async () => {
      const created = await createUser(validatorUser());
      const res = await c.delete(`/Users/${created.id}`);
      expect(res.status, res.text).toBe(204);
      expect(res.text).toBe('');
      expectScimError(await c.get(`/Users/${created.id}`), 404);
    });

    it('GET /Groups/Id — Get group by id excluding members', async () => {
      const member = await createMember();
      const created = await createGroup({ ...validatorGroup(), members: [{ value: member.id }] });
      expect(created.members).toEqual([memberOf(member)]);
      const res = await c.get(`/Groups/${created.id}?excludedAttributes=members`);
      expect(res.status, res.text).toBe(200);
      // "The response should exclude the attribute: members": no key at all, not [].
      expect(Object.keys(res.body)).not.toContain('members');
      const { members: _members, ...rest } = created;
      expect(res.body).toEqual(rest);
    });

    it('Get /Groups filter — Filter for an existing group by displayName excluding members', async () => {
      const member = await createMember();
      const created = await createGroup({ ...validatorGroup(), members: [{ value: member.id }] });
      const res = await c.get(
        `/Groups?excludedAttributes=members&${filterQuery(`displayName eq "${created.displayName}"`)}`,
      );
      const { members: _members, ...rest } = created;
      expectListOf(res, [rest]);
      expect(Object.keys(res.body.Resources[0])).not.toContain('members');
    });

    it('Get /Groups filter — Filter for an existing group', async () => {
      const member = await createMember();
      const created = await createGroup({ ...validatorGroup(), members: [{ value: member.id }] });
      await createGroup(validatorGroup()); // another group the filter must leave out
      const res = await c.get(`/Groups?${filterQuery(`displayName eq "${created.displayName}"`)}`);
      expectListOf(res, [created]);
      expect(res.body.Resources[0].members).toEqual([memberOf(member)]);
    });

    it('Get /Groups filter — Filter for a non-existing group', async () => {
      const res = await c.get(`/Groups?${filterQuery(`displayName eq "nonexistent group ${unique()}"`)}`);
      expectEmptyList(res);
    });

    it('Get /Groups filter — Filter for an existing group with a different case', async () => {
      const created = await createGroup(validatorGroup());
      const lower = created.displayName.toLowerCase();
      expect(lower).not.toBe(created.displayName);
      const res = await c.get(`/Groups?${filterQuery(`displayName eq "${lower}"`)}`);
      expectListOf(res, [created]);
    });

    it('POST /Groups — Create a new Group', async () => {
      const sent = validatorGroup();
      const res = await c.post('/Groups', sent);
      expect(res.status, res.text).toBe(201);
      const created = res.body;
      expect(created.id).toMatch(/\S/);
      expect(created.schemas).toEqual([GROUP]);
      expect(created.displayName).toBe(sent.displayName);
      expect(created.externalId).toBe(sent.externalId);
      expect(created.members).toEqual([]);
      expect(created.meta).toMatchObject({
        resourceType: 'Group',
        location: `${c.baseUrl}/Groups/${created.id}`,
      });
      expect(res.headers.location).toBe(created.meta.location);
      expect(await getGroup(c, created.id)).toEqual(created);
    });

    it('POST /Groups — Create a duplicate Group', async () => {
      const sent = validatorGroup();
      await createGroup(sent);
      const again = await c.post('/Groups', { ...validatorGroup(), displayName: sent.displayName });
      expectScimError(again, 409, 'uniqueness');
    });

    it('PATCH /Groups/Id — Patch Group - Replace Attributes', async () => {
      const created = await createGroup(validatorGroup());
      const externalId = `new-ext-${unique()}`;
      const group = await patchGroupAndRead(created.id, d.update('replace', { externalId }));
      expect(group.externalId).toBe(externalId);
      expect(group.displayName).toBe(created.displayName);
    });

    it('PATCH /Groups/Id — Update Group displayName', async () => {
      const created = await createGroup(validatorGroup());
      const displayName = `Renamed Team ${unique()}`;
      const group = await patchGroupAndRead(created.id, d.update('replace', { displayName }));
      expect(group.displayName).toBe(displayName);
      expect(group.externalId).toBe(created.externalId);
    });

    it('PATCH /Groups/Id — Patch Group - Add Member', async () => {
      const created = await createGroup(validatorGroup());
      const member = await createMember();
      const group = await patchGroupAndRead(created.id, [
        { op: d.op('replace'), path: 'members', value: [{ value: member.id }] },
      ]);
      expect(group.members).toEqual([memberOf(member)]);
    });

    it('PATCH /Groups/Id — Patch Group - Remove Member', async () => {
      const created = await createGroup(validatorGroup());
      const first = await createMember();
      const second = await createMember();
      const both = await patchGroupAndRead(created.id, [
        { op: d.op('replace'), path: 'members', value: [{ value: first.id }, { value: second.id }] },
      ]);
      expect(both.members).toHaveLength(2);
      const group = await patchGroupAndRead(created.id, d.removeMembers([first.id]));
      expect(group.members).toEqual([memberOf(second)]);
    });

    it('DELETE /Groups/Id — Delete a Group', async () => {
      const created = await createGroup(validatorGroup());
      const res = await c.delete(`/Groups/${created.id}`);
      expect(res.status, res.text).toBe(204);
      expect(res.text).toBe('');
      expectScimError(await c.get(`/Groups/${created.id}`), 404);
    });
  });

  describe('preview tests', () => {
    it('PATCH /Users/Id — Patch User - Multiple Operations on different attributes', async () => {
      const created = await createUser(validatorUser());
      expect(created.nickName).toBe('Gar');
      const id = unique();
      const user = await patchUser(c, created.id, [
        { op: d.op('remove'), path: 'nickName' },
        ...d.update('add', { externalId: `multi-${id}` }),
        ...d.update('replace', { displayName: `Multi ${id}` }),
      ]);
      expect(Object.keys(user)).not.toContain('nickName');
      expect(user.externalId).toBe(`multi-${id}`);
      expect(user.displayName).toBe(`Multi ${id}`);
    });

    it('PATCH /Users/Id — Patch User - Multiple Operations on same attribute', async () => {
      const created = await createUser(validatorUser());
      const id = unique();
      const user = await patchUser(c, created.id, [
        { op: d.op('remove'), path: 'externalId' },
        ...d.update('add', { externalId: `first-${id}` }),
        ...d.update('replace', { externalId: `second-${id}` }),
      ]);
      expect(user.externalId).toBe(`second-${id}`);
    });

    it('DELETE /Users/Id — Delete a non-existent User', async () => {
      expectScimError(await c.delete(`/Users/${randomUUID()}`), 404);
    });

    it('DELETE /Users/Id — Delete the same User twice', async () => {
      const created = await createUser(validatorUser());
      expect((await c.delete(`/Users/${created.id}`)).status).toBe(204);
      expectScimError(await c.delete(`/Users/${created.id}`), 404);
    });

    it('PATCH /Groups/Id — Patch Group - Multiple Operations on same attribute', async () => {
      const created = await createGroup(validatorGroup());
      const member = await createMember();
      const group = await patchGroupAndRead(created.id, [
        ...d.addMembers([member.id]),
        ...d.removeMembers([member.id]),
      ]);
      expect(group.members).toEqual([]);
    });

    it('DELETE /Groups/Id — Delete a non-existent Group', async () => {
      expectScimError(await c.delete(`/Groups/${randomUUID()}`), 404);
    });

    it('DELETE /Groups/Id — Delete the same Group twice', async () => {
      const created = await createGroup(validatorGroup());
      expect((await c.delete(`/Groups/${created.id}`)).status).toBe(204);
      expectScimError(await c.delete(`/Groups/${created.id}`), 404);
    });
  });
});
