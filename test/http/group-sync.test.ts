// Group synchronization per organization over HTTP on a real database: off by default, every /Groups
// route refused while off, data kept across turning it off and on, and the groups scope.
import { beforeAll, describe, expect, it } from 'vitest';
import { createGroup, createUser, getGroup, groupCalls } from '../helpers/groups.js';
import { ADMIN_TOKEN, type Harness, useHarness } from '../helpers/harness.js';
import {
  expectScimError,
  GROUP,
  type Json,
  LIST,
  patchOp,
  SCIM_JSON,
  SEARCH,
  USER,
} from '../helpers/scim.js';

const SYNC_DISABLED = /group synchroni[sz]ation is disabled/i;

let harness: Harness;
const { setGroupSync, call } = groupCalls(() => harness);
useHarness((h) => {
  harness = h;
});

const GROUP_ROUTES = [
  { method: 'GET', path: '/Groups' },
  { method: 'GET', path: '/Groups/:id' },
  { method: 'POST', path: '/Groups', body: { schemas: [GROUP], displayName: 'Refused' } },
  { method: 'PUT', path: '/Groups/:id', body: { schemas: [GROUP], displayName: 'Refused' } },
  {
    method: 'PATCH',
    path: '/Groups/:id',
    body: patchOp({ op: 'replace', path: 'displayName', value: 'Refused' }),
  },
  { method: 'DELETE', path: '/Groups/:id' },
  { method: 'POST', path: '/Groups/.search', body: { schemas: [SEARCH] } },
] as const;

/** An organization whose group sync was on while a group was created, then turned off. */
async function orgWithKeptGroup() {
  const g = await harness.tenant();
  const groupsOnly = await harness.createToken(g.orgId, { scopes: ['groups'] });
  const usersOnly = await harness.createToken(g.orgId, { scopes: ['users'] });
  const userId = await createUser(g, { userName: 'kept@corp.example', displayName: 'Kept' });
  await setGroupSync(g.orgId, true);
  const group: Json = await createGroup(g, {
    displayName: 'Kept group',
    externalId: 'kept-ext',
    members: [{ value: userId }],
  });
  await setGroupSync(g.orgId, false);
  return { g, groupsOnly, usersOnly, userId, group };
}

describe('group synchronization setting', () => {
  it('is off for a new organization: GET /Groups is 403 and says so', async () => {
    const g = await harness.tenant();
    const org = await harness.http
      .get(`/admin/v1/orgs/${g.orgId}`)
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .expect(200);
    expect(org.body.groupSync).toBe(false);
    const res = await g.get('/Groups');
    expectScimError(res, 403);
    expect(res.body.detail).toMatch(SYNC_DISABLED);
  });

  describe('while off', () => {
    let fixture: Awaited<ReturnType<typeof orgWithKeptGroup>>;
    beforeAll(async () => {
      fixture = await orgWithKeptGroup();
    });

    it.each(GROUP_ROUTES)('answers $method $path with 403', async ({ method, path, ...rest }) => {
      const { g, groupsOnly, group } = fixture;
      const body = 'body' in rest ? rest.body : undefined;
      const res = await call(g.token, g.basePath, method, path.replace(':id', group.id), body);
      expectScimError(res, 403);
      expect(res.body.detail).toMatch(SYNC_DISABLED);
      // A groups-only token is refused the same way.
      const scoped = await call(groupsOnly, g.basePath, method, path.replace(':id', group.id), body);
      expectScimError(scoped, 403);
      expect(scoped.body.detail).toMatch(SYNC_DISABLED);
    });

    it('keeps /Users working', async () => {
      const { g, userId } = fixture;
      const list = (await g.get('/Users').expect(200)).body;
      expect(list.Resources.map((u: { id: string }) => u.id)).toContain(userId);
      const created = await createUser(g);
      await g.get(`/Users/${created}`).expect(200);
      await g
        .patch(`/Users/${created}`, patchOp({ op: 'replace', path: 'displayName', value: 'X' }))
        .expect(200);
      await g.delete(`/Users/${created}`).expect(204);
    });

    it('refuses POST /.search to a groups-only token, with that detail', async () => {
      const { g, groupsOnly } = fixture;
      const res = await call(groupsOnly, g.basePath, 'POST', '/.search', { schemas: [SEARCH] });
      expectScimError(res, 403);
      expect(res.body.detail).toMatch(SYNC_DISABLED);
    });

    it('answers POST /.search with users only to a both-scopes token', async () => {
      const { g, group } = fixture;
      const res = await g.post('/.search', { schemas: [SEARCH] }).expect(200);
      expect(res.headers['content-type']).toBe(SCIM_JSON);
      expect(res.body.schemas).toEqual([LIST]);
      expect(res.body.totalResults).toBe(res.body.Resources.length);
      expect(res.body.Resources.length).toBeGreaterThan(0);
      for (const r of res.body.Resources) {
        expect(r.schemas).toContain(USER);
        expect(r.meta.resourceType).toBe('User');
      }
      expect(res.body.Resources.map((r: { id: string }) => r.id)).not.toContain(group.id);
    });
  });

  it('serves the data created before once turned back on, untouched by the writes refused while off', async () => {
    const { g, groupsOnly, group } = await orgWithKeptGroup();
    for (const { method, path, ...rest } of GROUP_ROUTES) {
      const body = 'body' in rest ? rest.body : undefined;
      expectScimError(await call(g.token, g.basePath, method, path.replace(':id', group.id), body), 403);
    }
    await setGroupSync(g.orgId, true);
    const again = await getGroup(g, group.id);
    expect(again).toEqual(group);
    const list = (await g.get('/Groups').expect(200)).body;
    expect(list.totalResults).toBe(1);
    expect(list.Resources[0].displayName).toBe('Kept group');
    // Refused POSTs created nothing.
    const refused = (
      await g.get(`/Groups?filter=${encodeURIComponent('displayName eq "Refused"')}`).expect(200)
    ).body;
    expect(refused.totalResults).toBe(0);
    // POST /.search now returns both types to a both-scopes token.
    const both = (await g.post('/.search', { schemas: [SEARCH] }).expect(200)).body;
    expect(both.Resources.map((r: { id: string }) => r.id)).toContain(group.id);
    // One list across types: users first, then groups, index-paged as one.
    const second = (await g.post('/.search', { schemas: [SEARCH], startIndex: 2, count: 1 }).expect(200))
      .body;
    expect(second).toMatchObject({ totalResults: 2, startIndex: 2, itemsPerPage: 1 });
    expect(second.Resources.map((r: { id: string }) => r.id)).toEqual([group.id]);
    const named = (
      await g.post('/.search', { schemas: [SEARCH], filter: 'displayName eq "kept group"' }).expect(200)
    ).body;
    expect(named.Resources.map((r: { id: string }) => r.id)).toEqual([group.id]);
    const onlyGroups = (
      await call(groupsOnly, g.basePath, 'POST', '/.search', { schemas: [SEARCH] }).expect(200)
    ).body;
    expect(onlyGroups.Resources.map((r: { id: string }) => r.id)).toEqual([group.id]);
  });

  describe('once on', () => {
    let fixture: Awaited<ReturnType<typeof orgWithKeptGroup>>;
    beforeAll(async () => {
      fixture = await orgWithKeptGroup();
      await setGroupSync(fixture.g.orgId, true);
    });

    it('shows a token only the data of its scopes: no user data to a groups-only one, no groups to a users-only one', async () => {
      const { g, groupsOnly, usersOnly, userId, group } = await orgWithKeptGroup();
      await setGroupSync(g.orgId, true);
      const named = await createUser(g, { userName: 'named@corp.example', displayName: 'Named' });
      await g
        .patch(
          `/Groups/${group.id}`,
          patchOp({ op: 'add', path: 'members', value: [{ value: named, display: 'Sent with the group' }] }),
        )
        .expect((res) => expect([200, 204]).toContain(res.status));
      const displays = (body: Json) =>
        Object.fromEntries(body.members.map((m: Json) => [m.value, 'display' in m ? m.display : '(none)']));
      // Both scopes: what the IdP sent with the group, else the user's displayName.
      const both = await g.get(`/Groups/${group.id}`).expect(200);
      expect(displays(both.body)).toEqual({ [userId]: 'Kept', [named]: 'Sent with the group' });
      // Groups only: what the IdP sent with the group, and nothing read from the user.
      const onlyGroups = await call(groupsOnly, g.basePath, 'GET', `/Groups/${group.id}`).expect(200);
      expect(displays(onlyGroups.body)).toEqual({ [userId]: '(none)', [named]: 'Sent with the group' });
      const listed = await call(groupsOnly, g.basePath, 'GET', '/Groups').expect(200);
      expect(JSON.stringify(listed.body)).not.toMatch(/Kept"|kept@corp/);
      // Users only: the user without the groups it is in.
      const user = await call(usersOnly, g.basePath, 'GET', `/Users/${userId}`).expect(200);
      expect(user.body).not.toHaveProperty('groups');
      expect((await g.get(`/Users/${userId}`).expect(200)).body.groups).toEqual([
        expect.objectContaining({ value: group.id }),
      ]);
    });

    it.each(GROUP_ROUTES)(
      'refuses $method $path to a users-only token (scope)',
      async ({ method, path, ...rest }) => {
        const { g, usersOnly, group } = fixture;
        const body = 'body' in rest ? rest.body : undefined;
        const res = await call(usersOnly, g.basePath, method, path.replace(':id', group.id), body);
        expectScimError(res, 403);
        expect(res.body.detail).toMatch(/Groups/);
        expect(res.body.detail).not.toMatch(SYNC_DISABLED);
        expect(await getGroup(g, group.id)).toEqual(group);
      },
    );
  });
});
