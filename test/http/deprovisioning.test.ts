// Deprovisioning over HTTP on a real database: DELETE /Users/{id} in each mode end to end (with the
// rows each leaves behind), and deleting an organization with all its data.
import { beforeAll, describe, expect, it } from 'vitest';
import { adminCalls, type Json, type Method, UNKNOWN_ID } from '../helpers/admin.js';
import { type Harness, useHarness } from '../helpers/harness.js';
import {
  ENTERPRISE,
  expectAdminError,
  expectScimError,
  filterQuery,
  GROUP,
  patchOp,
  SEARCH,
  USER,
} from '../helpers/scim.js';

let harness: Harness;
useHarness((h) => {
  harness = h;
});
const { scim, expectRefused, patchOrg, createToken, rotate, orgWithToken } = adminCalls(() => harness);

describe('deprovisioning (DELETE /Users/{id}) in each mode', () => {
  const PERSONAL = ['Dana', 'Fox', 'dana.fox', '555-0100', 'ext-dana', 'E-1001', 'mgr-77', 'Research'];

  const person = (userName: string, externalId: string) => ({
    schemas: [USER, ENTERPRISE],
    userName,
    externalId,
    displayName: 'Dana Fox',
    name: { givenName: 'Dana', familyName: 'Fox', formatted: 'Dana Fox' },
    emails: [{ value: 'dana.fox@corp.example', type: 'work', primary: true }],
    phoneNumbers: [{ value: '+1 555-0100', type: 'work' }],
    title: 'Researcher',
    active: true,
    [ENTERPRISE]: { employeeNumber: 'E-1001', department: 'Research', manager: { value: 'mgr-77' } },
  });

  async function userRow(orgId: string, id: string) {
    return harness.database.db
      .selectFrom('users')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  async function membershipRows(orgId: string, userId: string) {
    return harness.database.db
      .selectFrom('group_members')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('user_id', '=', userId)
      .execute();
  }

  describe.each(['deactivate', 'anonymize', 'delete'] as const)('%s', (mode) => {
    let orgId: string;
    let secret: string;
    const call = (m: Method, path: string, body?: unknown) => scim(secret, orgId, m, path, body);
    const userName = `Dana.Fox.${mode}@corp.example`;
    const externalId = `ext-dana-${mode}`;
    let gone: Json;
    let stays: Json;
    let group: Json;

    beforeAll(async () => {
      const o = await orgWithToken({ name: `Deprovision ${mode}`, groupSync: true });
      orgId = o.orgId;
      secret = o.token.secret;
      await patchOrg(orgId, { deprovisioning: mode });
      gone = (await call('post', '/Users', person(userName, externalId)).expect(201)).body;
      stays = (
        await call('post', '/Users', { schemas: [USER], userName: `stays.${mode}@corp.example` }).expect(201)
      ).body;
      group = (
        await call('post', '/Groups', {
          schemas: [GROUP],
          displayName: `Team ${mode}`,
          members: [{ value: gone.id }, { value: stays.id }],
        }).expect(201)
      ).body;
      expect(group.members).toHaveLength(2);
      const res = await call('delete', `/Users/${gone.id}`).expect(204);
      expect(res.text).toBe('');
    });

    it('answers 404 to GET, PUT, PATCH and DELETE of the id afterwards', async () => {
      expectScimError(await call('get', `/Users/${gone.id}`), 404);
      expectScimError(await call('put', `/Users/${gone.id}`, person(userName, externalId)), 404);
      expectScimError(
        await call('patch', `/Users/${gone.id}`, patchOp({ op: 'replace', path: 'active', value: true })),
        404,
      );
      expectScimError(await call('delete', `/Users/${gone.id}`), 404);
    });

    it('shows it in no list, filter or search', async () => {
      const all = (await call('get', '/Users?count=1000').expect(200)).body;
      const ids = all.Resources.map((u: Json) => u.id);
      expect(ids).toContain(stays.id);
      expect(ids).not.toContain(gone.id);
      expect(all.totalResults).toBe(ids.length);
      for (const filter of [
        `userName eq "${userName}"`,
        `id eq "${gone.id}"`,
        `externalId eq "${externalId}"`,
        'emails.value eq "dana.fox@corp.example"',
        'emails[type eq "work" and value eq "dana.fox@corp.example"]',
        'name.familyName eq "Fox"',
        'active eq false',
        `${ENTERPRISE}:employeeNumber eq "E-1001"`,
      ]) {
        const res = (await call('get', `/Users?${filterQuery(filter)}`).expect(200)).body;
        expect(res.totalResults, filter).toBe(0);
      }
      const searched = (
        await call('post', '/Users/.search', { schemas: [SEARCH], filter: 'userName sw "Dana"' }).expect(200)
      ).body;
      expect(searched.totalResults).toBe(0);
      const root = (await call('post', '/.search', { schemas: [SEARCH] }).expect(200)).body;
      expect(root.Resources.map((r: Json) => r.id)).not.toContain(gone.id);
    });

    it('takes it out of its group; members[value eq id] finds nothing; the other member stays', async () => {
      const after = (await call('get', `/Groups/${group.id}`).expect(200)).body;
      expect(after.members.map((m: Json) => m.value)).toEqual([stays.id]);
      const found = (
        await call('get', `/Groups?${filterQuery(`members[value eq "${gone.id}"]`)}`).expect(200)
      ).body;
      expect(found.totalResults).toBe(0);
      const still = (
        await call('get', `/Groups?${filterQuery(`members[value eq "${stays.id}"]`)}`).expect(200)
      ).body;
      expect(still.Resources.map((g: Json) => g.id)).toEqual([group.id]);
      expect(await membershipRows(orgId, gone.id)).toEqual([]);
    });

    it('refuses the old id as a group member with 400 invalidValue', async () => {
      const res = await call(
        'patch',
        `/Groups/${group.id}`,
        patchOp({ op: 'add', path: 'members', value: [{ value: gone.id }] }),
      );
      expectScimError(res, 400, 'invalidValue');
      expect(res.body.detail).toContain(gone.id);
      const created = await call('post', '/Groups', {
        schemas: [GROUP],
        displayName: `Other ${mode}`,
        members: [{ value: gone.id }],
      });
      expectScimError(created, 400, 'invalidValue');
      expect(await membershipRows(orgId, gone.id)).toEqual([]);
    });

    it('leaves the database as the mode says', async () => {
      const row = await userRow(orgId, gone.id);
      if (mode === 'delete') {
        expect(row).toBeUndefined();
        return;
      }
      expect(row).toBeDefined();
      expect(row!.deprovisioned_at).toBeInstanceOf(Date);
      expect(Math.abs(row!.deprovisioned_at!.getTime() - Date.now())).toBeLessThan(120_000);
      expect(row!.active).toBe(false);
      expect(row!.data.active).toBe(false);
      if (mode === 'deactivate') {
        // The record is kept for the product: every attribute as it was, only active is false.
        expect(row!.user_name).toBe(userName);
        expect(row!.external_id).toBe(externalId);
        expect(row!.display_name).toBe('Dana Fox');
        const { schemas: _schemas, ...sent } = person(userName, externalId);
        expect(row!.data).toEqual({ ...sent, active: false });
      } else {
        expect(row!.user_name).toBe(`deprovisioned-${gone.id}`);
        expect(row!.external_id).toBeNull();
        expect(row!.display_name).toBeNull();
        for (const key of [
          'userName',
          'name',
          'emails',
          'phoneNumbers',
          'externalId',
          'displayName',
          'title',
        ]) {
          expect(row!.data, key).not.toHaveProperty(key);
        }
        expect(row!.data).not.toHaveProperty([ENTERPRISE]);
        const stored = JSON.stringify(row);
        for (const value of [...PERSONAL, userName]) expect(stored, value).not.toContain(value);
      }
    });

    it('frees the userName: POST with it in another case is 201 with a new id', async () => {
      const name = `Freed.${mode}@corp.example`;
      const old = (await call('post', '/Users', { schemas: [USER], userName: name }).expect(201)).body;
      await call('delete', `/Users/${old.id}`).expect(204);
      const again = await call('post', '/Users', { schemas: [USER], userName: name.toUpperCase() }).expect(
        201,
      );
      expect(again.body.id).not.toBe(old.id);
      expect(again.body.userName).toBe(name.toUpperCase());
      const found = (await call('get', `/Users?${filterQuery(`userName eq "${name}"`)}`).expect(200)).body;
      expect(found.Resources.map((u: Json) => u.id)).toEqual([again.body.id]);
      // The old id is still not served, and its row is kept or removed as the mode says.
      expectScimError(await call('get', `/Users/${old.id}`), 404);
      expect(await userRow(orgId, old.id)).toEqual(mode === 'delete' ? undefined : expect.anything());
    });
  });

  it('applies a mode change to later DELETEs only', async () => {
    const { orgId, token } = await orgWithToken({ name: 'Mode change' });
    const call = (m: Method, path: string, body?: unknown) => scim(token.secret, orgId, m, path, body);
    const mk = async (n: string) =>
      (await call('post', '/Users', person(`${n}@corp.example`, `ext-dana-${n}`)).expect(201)).body.id;
    const first = await mk('first');
    await call('delete', `/Users/${first}`).expect(204);
    const kept = await userRow(orgId, first);
    expect(kept!.deprovisioned_at).toBeInstanceOf(Date);

    await patchOrg(orgId, { deprovisioning: 'delete' });
    const second = await mk('second');
    await call('delete', `/Users/${second}`).expect(204);
    expect(await userRow(orgId, second)).toBeUndefined();
    // The user deactivated before the switch stays as it was, and a DELETE of it is still 404.
    expectScimError(await call('delete', `/Users/${first}`), 404);
    expect(await userRow(orgId, first)).toEqual(kept);

    await patchOrg(orgId, { deprovisioning: 'anonymize' });
    const third = await mk('third');
    await call('delete', `/Users/${third}`).expect(204);
    expect((await userRow(orgId, third))!.user_name).toBe(`deprovisioned-${third}`);
    // Not anonymized after the fact.
    expect(await userRow(orgId, first)).toEqual(kept);
    expect(kept!.data.userName).toBe('first@corp.example');
  });

  it('does not deprovision on PATCH active false: the user stays visible, inactive, with its userName', async () => {
    const { orgId, token } = await orgWithToken({ name: 'Inactive', groupSync: true });
    const call = (m: Method, path: string, body?: unknown) => scim(token.secret, orgId, m, path, body);
    const id = (
      await call('post', '/Users', person('inactive@corp.example', 'ext-dana-inactive')).expect(201)
    ).body.id;
    const group = (
      await call('post', '/Groups', {
        schemas: [GROUP],
        displayName: 'Inactive team',
        members: [{ value: id }],
      })
    ).body;
    const res = await call('patch', `/Users/${id}`, patchOp({ op: 'replace', path: 'active', value: false }));
    expect(res.status, res.text).toBe(200);
    expect(res.body.active).toBe(false);
    expect((await call('get', `/Users/${id}`).expect(200)).body.active).toBe(false);
    const inactive = (await call('get', `/Users?${filterQuery('active eq false')}`).expect(200)).body;
    expect(inactive.Resources.map((u: Json) => u.id)).toEqual([id]);
    expect(
      (await call('get', `/Groups/${group.id}`).expect(200)).body.members.map((m: Json) => m.value),
    ).toEqual([id]);
    const row = await userRow(orgId, id);
    expect(row!.deprovisioned_at).toBeNull();
    expect(row!.active).toBe(false);
    expect(row!.user_name).toBe('inactive@corp.example');
    // Its userName is still taken.
    expectScimError(
      await call('post', '/Users', { schemas: [USER], userName: 'INACTIVE@corp.example' }),
      409,
      'uniqueness',
    );
  });
});

describe('DELETE /admin/v1/orgs/{id}', () => {
  const TABLES = ['scim_tokens', 'users', 'groups', 'group_members', 'audit_events'] as const;

  async function counts(orgId: string): Promise<Record<string, number>> {
    const db = harness.database.db;
    const result: Record<string, number> = {};
    const orgs = await db
      .selectFrom('orgs')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('id', '=', orgId)
      .executeTakeFirstOrThrow();
    result.orgs = Number(orgs.n);
    for (const table of TABLES) {
      const row = await db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('org_id', '=', orgId)
        .executeTakeFirstOrThrow();
      result[table] = Number(row.n);
    }
    return result;
  }

  /** An organization with tokens (one rotated), users (one deprovisioned), groups with members, audit rows. */
  async function populated(name: string) {
    const { orgId, token } = await orgWithToken({ name, groupSync: true });
    const call = (m: Method, path: string, body?: unknown) => scim(token.secret, orgId, m, path, body);
    const extra = await createToken(orgId, { scopes: ['users'] });
    await rotate(orgId, extra.id, {}).expect(201);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push(
        (await call('post', '/Users', { schemas: [USER], userName: `${name}-${i}@corp.example` })).body.id,
      );
    }
    await call('post', '/Groups', {
      schemas: [GROUP],
      displayName: `${name} all`,
      members: ids.map((value) => ({ value })),
    }).expect(201);
    await call('post', '/Groups', {
      schemas: [GROUP],
      displayName: `${name} one`,
      members: [{ value: ids[0] }],
    }).expect(201);
    await call('delete', `/Users/${ids[2]}`).expect(204);
    return { orgId, token, call, userId: ids[0]! };
  }

  it('deletes the organization and all its data; another organization is untouched', async () => {
    const doomed = await populated('doomed');
    const other = await populated('kept');
    const doomedBefore = await counts(doomed.orgId);
    expect(doomedBefore).toEqual({
      orgs: 1,
      scim_tokens: 3,
      users: 3,
      groups: 2,
      group_members: 3,
      audit_events: expect.any(Number),
    });
    expect(doomedBefore.audit_events).toBeGreaterThan(0);
    const otherBefore = await counts(other.orgId);
    const otherUser = (await other.call('get', `/Users/${other.userId}`).expect(200)).body;

    const res = await harness.admin('delete', `/orgs/${doomed.orgId}`).expect(204);
    expect(res.text).toBe('');

    expectAdminError(await harness.admin('get', `/orgs/${doomed.orgId}`), 404, 'not_found');
    expectAdminError(await harness.admin('get', `/orgs/${doomed.orgId}/tokens`), 404, 'not_found');
    expectAdminError(await harness.admin('get', `/orgs/${doomed.orgId}/events`), 404, 'not_found');
    const orgs = (await harness.admin('get', '/orgs').expect(200)).body.orgs;
    expect(orgs.map((o: Json) => o.id)).not.toContain(doomed.orgId);
    expect(orgs.map((o: Json) => o.id)).toContain(other.orgId);

    await expectRefused(doomed.token.secret, doomed.orgId, /./);
    expectScimError(await doomed.call('get', `/Users/${doomed.userId}`), 401);
    expectScimError(
      await doomed.call('post', '/Users', { schemas: [USER], userName: 'ghost@corp.example' }),
      401,
    );

    expect(await counts(doomed.orgId)).toEqual({
      orgs: 0,
      scim_tokens: 0,
      users: 0,
      groups: 0,
      group_members: 0,
      audit_events: 0,
    });

    expect(await counts(other.orgId)).toEqual(otherBefore);
    expect((await other.call('get', `/Users/${other.userId}`).expect(200)).body).toEqual(otherUser);
    expect((await harness.admin('get', `/orgs/${other.orgId}`).expect(200)).body.id).toBe(other.orgId);

    expectAdminError(await harness.admin('delete', `/orgs/${doomed.orgId}`), 404, 'not_found');
  });

  it('leaves nothing behind of users and groups created while it runs, and never answers them 500', async () => {
    const org = await harness.createOrg({ name: 'Racing', groupSync: true });
    const t = await harness.tenantOf(org.id, await harness.createToken(org.id));
    let deleted = false;
    const creator = async (k: number) => {
      const statuses: number[] = [];
      for (let i = 0; !deleted || i < 3; i++) {
        const res =
          i % 2 === 0
            ? await t.post('/Users', { schemas: [USER], userName: `race-${k}-${i}@corp.example` })
            : await t.post('/Groups', { schemas: [GROUP], displayName: `race ${k} ${i}` });
        statuses.push(res.status);
        if (res.status === 401) break;
      }
      return statuses;
    };
    const creators = Array.from({ length: 6 }, (_, k) => creator(k));
    await new Promise((r) => setTimeout(r, 150));
    // The deletion may meet a create's locks and answer 503 with Retry-After (a deadlock Postgres
    // broke): the admin then deletes again.
    for (let attempt = 0; ; attempt++) {
      const res = await harness.admin('delete', `/orgs/${org.id}`);
      if (res.status === 204) break;
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toMatch(/^\d+$/);
      expect(attempt).toBeLessThan(5);
    }
    deleted = true;
    const statuses = (await Promise.all(creators)).flat();
    expect(statuses).toContain(201);
    // A create caught in a deadlock with the deletion answers 503 with Retry-After, as IdPs retry.
    expect(statuses.filter((s) => ![201, 401, 404, 503].includes(s))).toEqual([]);
    expect(await counts(org.id)).toEqual({
      orgs: 0,
      scim_tokens: 0,
      users: 0,
      groups: 0,
      group_members: 0,
      audit_events: 0,
    });
  });

  it.each([UNKNOWN_ID, 'not-a-uuid'])('answers 404 not_found for org %s', async (id) => {
    expectAdminError(await harness.admin('delete', `/orgs/${id}`), 404, 'not_found');
  });
});
