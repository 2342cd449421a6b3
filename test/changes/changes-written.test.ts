// Which changes each SCIM write leaves in the feed, in the write's transaction: their types, the
// attributes named, the read model's data, and none for a write that changed nothing or failed.
import { beforeAll, describe, expect, it } from 'vitest';
import { changesOf, currentCursor } from '../helpers/changes.js';
import { type Harness, type Tenant, useHarness } from '../helpers/harness.js';
import { ENTERPRISE, GROUP, type Json, patchOp, USER } from '../helpers/scim.js';

let harness: Harness;
useHarness((h) => {
  harness = h;
});

const person = (userName: string) => ({
  schemas: [USER, ENTERPRISE],
  userName,
  externalId: `ext-${userName}`,
  displayName: 'Dana Fox',
  name: { givenName: 'Dana', familyName: 'Fox' },
  emails: [
    { value: `${userName}@home.example`, type: 'home' },
    { value: `${userName}@corp.example`, type: 'work', primary: true },
  ],
  title: 'Researcher',
  active: true,
  [ENTERPRISE]: { employeeNumber: 'E-1001', department: 'Research', manager: { value: 'mgr-77' } },
});

async function tenantWith(body: Record<string, unknown> = {}): Promise<Tenant> {
  const org = await harness.createOrg({ name: 'Feed', groupSync: true, ...body });
  return harness.tenantOf(org.id, await harness.createToken(org.id));
}

/** The changes `write` left in the tenant's organization. */
async function changesAfter(t: Tenant, write: () => Promise<unknown>): Promise<Json[]> {
  const before = await currentCursor(harness);
  await write();
  return changesOf(harness, t.orgId, before);
}

describe('user changes', () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await tenantWith();
  });

  it('POST writes user.created with the read model row as data', async () => {
    let id = '';
    const changes = await changesAfter(t, async () => {
      id = (await t.post('/Users', person('dana')).expect(201)).body.id;
    });
    expect(changes).toHaveLength(1);
    const [change] = changes;
    expect(change).toMatchObject({
      orgId: t.orgId,
      type: 'user.created',
      resourceType: 'User',
      resourceId: id,
      eventUri: 'urn:ietf:params:scim:event:prov:create:full',
    });
    expect(change.id).toMatch(/^\d+$/);
    expect(change.cursor).toMatch(/^\d+$/);
    expect(Date.parse(change.occurredAt)).not.toBeNaN();
    expect(change.data).toMatchObject({
      org_id: t.orgId,
      id,
      external_id: 'ext-dana',
      user_name: 'dana',
      active: true,
      deprovisioned: false,
      deprovisioned_at: null,
      display_name: 'Dana Fox',
      given_name: 'Dana',
      family_name: 'Fox',
      primary_email: 'dana@corp.example',
      emails: ['dana@home.example', 'dana@corp.example'],
      title: 'Researcher',
      department: 'Research',
      manager_id: 'mgr-77',
      employee_number: 'E-1001',
    });
    expect(change.data.attributes.userName).toBe('dana');
    expect(change).not.toHaveProperty('changedAttributes');
  });

  it('PATCH and PUT write user.updated naming the attributes that changed, extensions by URN', async () => {
    const id = (await t.post('/Users', person('erin')).expect(201)).body.id;
    const patched = await changesAfter(t, () =>
      t
        .patch(
          `/Users/${id}`,
          patchOp(
            { op: 'replace', path: 'title', value: 'Lead' },
            { op: 'replace', path: `${ENTERPRISE}:department`, value: 'Labs' },
          ),
        )
        .expect(200),
    );
    expect(patched).toHaveLength(1);
    expect(patched[0]).toMatchObject({
      type: 'user.updated',
      resourceId: id,
      changedAttributes: ['title', `${ENTERPRISE}:department`],
      eventUri: 'urn:ietf:params:scim:event:prov:patch:full',
      data: { title: 'Lead', department: 'Labs' },
    });
    const put = await changesAfter(t, () =>
      t.put(`/Users/${id}`, { ...person('erin'), displayName: 'Erin Fox' }).expect(200),
    );
    expect(put.map((c) => c.type)).toEqual(['user.updated']);
    expect(put[0].changedAttributes).toEqual(['displayName', 'title', `${ENTERPRISE}:department`]);
  });

  it('a PATCH or PUT that changes nothing writes no change', async () => {
    const id = (await t.post('/Users', person('flo')).expect(201)).body.id;
    const none = await changesAfter(t, async () => {
      await t
        .patch(`/Users/${id}`, patchOp({ op: 'replace', path: 'title', value: 'Researcher' }))
        .expect(200);
      await t.patch(`/Users/${id}`, patchOp({ op: 'replace', value: { active: true } })).expect(200);
      await t.put(`/Users/${id}`, person('flo')).expect(200);
    });
    expect(none).toEqual([]);
  });

  it('active flipping is user.deactivated or user.reactivated, whatever the operation', async () => {
    const id = (await t.post('/Users', person('gus')).expect(201)).body.id;
    const changes = await changesAfter(t, async () => {
      await t.patch(`/Users/${id}`, patchOp({ op: 'replace', path: 'active', value: false })).expect(200);
      await t.put(`/Users/${id}`, { ...person('gus'), active: true }).expect(200);
      // Entra's form: a pathless replace with the value as a string.
      await t.patch(`/Users/${id}`, patchOp({ op: 'Replace', value: { active: 'False' } })).expect(200);
    });
    expect(changes.map((c) => [c.type, c.eventUri, c.data.active])).toEqual([
      ['user.deactivated', 'urn:ietf:params:scim:event:prov:deactivate', false],
      ['user.reactivated', 'urn:ietf:params:scim:event:prov:activate', true],
      ['user.deactivated', 'urn:ietf:params:scim:event:prov:deactivate', false],
    ]);
    expect(changes[0].changedAttributes).toEqual(['active']);
  });

  it('a write that fails or is refused leaves no change', async () => {
    const id = (await t.post('/Users', person('hal')).expect(201)).body.id;
    const none = await changesAfter(t, async () => {
      await t.post('/Users', person('hal')).expect(409);
      await t.post('/Users', person('HAL')).expect(409);
      await t.patch(`/Users/${id}`, patchOp({ op: 'replace', path: 'userName', value: 'dana' })).expect(409);
      await t.patch(`/Users/${id}`, patchOp({ op: 'add', path: 'nonsense', value: 1 })).expect(400);
    });
    expect(none).toEqual([]);
  });
});

describe('deprovisioning writes user.deprovisioned with the mode, and the memberships it ends', () => {
  it.each(['deactivate', 'anonymize', 'delete'] as const)('%s', async (mode) => {
    const t = await tenantWith({ deprovisioning: mode });
    const id = (await t.post('/Users', person(`ida-${mode}`)).expect(201)).body.id;
    const group = (
      await t
        .post('/Groups', { schemas: [GROUP], displayName: 'Staff', members: [{ value: id }] })
        .expect(201)
    ).body.id;
    const changes = await changesAfter(t, () => t.delete(`/Users/${id}`).expect(204));
    expect(changes.map((c) => c.type).sort()).toEqual(['group.members_removed', 'user.deprovisioned']);
    const gone = changes.find((c) => c.type === 'user.deprovisioned');
    expect(gone).toMatchObject({ resourceId: id, mode, eventUri: 'urn:ietf:params:scim:event:prov:delete' });
    expect(gone.data.id).toBe(id);
    expect(gone.data.active).toBe(false);
    if (mode === 'anonymize') expect(gone.data.user_name).toBe(`deprovisioned-${id}`);
    if (mode === 'delete') expect(gone.data.user_name).toBe(`ida-${mode}`);
    expect(gone.data.deprovisioned).toBe(true);
    expect(Date.parse(gone.data.deprovisioned_at)).not.toBeNaN();
    const removed = changes.find((c) => c.type === 'group.members_removed');
    expect(removed).toMatchObject({ resourceId: group, resourceType: 'Group', data: { userIds: [id] } });
  });
});

describe('group changes', () => {
  let t: Tenant;
  const users: string[] = [];
  beforeAll(async () => {
    t = await tenantWith();
    for (const name of ['m1', 'm2', 'm3'])
      users.push((await t.post('/Users', person(name)).expect(201)).body.id);
  });

  it('create, rename, member changes and delete, each once', async () => {
    let id = '';
    const changes = await changesAfter(t, async () => {
      id = (
        await t
          .post('/Groups', {
            schemas: [GROUP],
            displayName: 'Eng',
            externalId: 'g-1',
            members: [{ value: users[0] }],
          })
          .expect(201)
      ).body.id;
      await t
        .patch(`/Groups/${id}`, patchOp({ op: 'replace', path: 'displayName', value: 'Engineering' }))
        .expect(204);
      await t
        .patch(
          `/Groups/${id}`,
          patchOp({ op: 'add', path: 'members', value: [{ value: users[1] }, { value: users[2] }] }),
        )
        .expect(204);
      await t
        .patch(`/Groups/${id}`, patchOp({ op: 'remove', path: `members[value eq "${users[0]}"]` }))
        .expect(204);
      // Adding a member the group has already is no change.
      await t
        .patch(`/Groups/${id}`, patchOp({ op: 'add', path: 'members', value: [{ value: users[1] }] }))
        .expect(204);
      await t.delete(`/Groups/${id}`).expect(204);
    });
    const sorted = (ids: string[]) => [...ids].sort();
    expect(changes.map((c) => [c.type, c.data.userIds ?? c.data.display_name])).toEqual([
      ['group.created', 'Eng'],
      ['group.members_added', [users[0]]],
      ['group.updated', 'Engineering'],
      ['group.members_added', sorted([users[1]!, users[2]!])],
      ['group.members_removed', [users[0]]],
      ['group.deleted', 'Engineering'],
    ]);
    expect(changes.every((c) => c.resourceId === id && c.resourceType === 'Group')).toBe(true);
    expect(changes[2].changedAttributes).toEqual(['displayName']);
    expect(changes[0].data).toMatchObject({ org_id: t.orgId, id, external_id: 'g-1', display_name: 'Eng' });
    expect(changes[0].data.attributes).not.toHaveProperty('members');
  });

  it('a PUT of 2,500 members is three member changes of at most 1,000 ids', async () => {
    const org = await harness.database.db.transaction().execute(async (trx) => {
      // The members are inserted directly: 2,500 POSTs would say nothing more.
      const now = new Date();
      const ids = Array.from({ length: 2500 }, () => crypto.randomUUID());
      await trx
        .insertInto('users')
        .values(
          ids.map((id, i) => ({
            org_id: t.orgId,
            id,
            user_name: `bulk-${i}`,
            active: true,
            data: JSON.stringify({ schemas: [USER], userName: `bulk-${i}`, active: true }),
            created_at: now,
            updated_at: now,
          })),
        )
        .execute();
      return ids;
    });
    const id = (await t.post('/Groups', { schemas: [GROUP], displayName: 'Everyone' }).expect(201)).body.id;
    const changes = await changesAfter(t, () =>
      t
        .put(`/Groups/${id}`, {
          schemas: [GROUP],
          displayName: 'Everyone',
          members: org.map((value) => ({ value })),
        })
        .expect(200),
    );
    expect(changes.map((c) => [c.type, c.data.userIds.length])).toEqual([
      ['group.members_added', 1000],
      ['group.members_added', 1000],
      ['group.members_added', 500],
    ]);
    expect(new Set(changes.flatMap((c) => c.data.userIds))).toEqual(new Set(org));
  });
});

describe('deleting an organization', () => {
  it('leaves org.deleted as its only and last change', async () => {
    const t = await tenantWith();
    const id = (await t.post('/Users', person('zed')).expect(201)).body.id;
    await t.post('/Groups', { schemas: [GROUP], displayName: 'All', members: [{ value: id }] }).expect(201);
    expect((await changesOf(harness, t.orgId)).length).toBe(3);
    await harness.admin('delete', `/orgs/${t.orgId}`).expect(204);
    const changes = await changesOf(harness, t.orgId);
    expect(changes).toEqual([
      expect.objectContaining({
        type: 'org.deleted',
        resourceType: 'Org',
        resourceId: t.orgId,
        eventUri: null,
      }),
    ]);
    expect(changes[0].data).toEqual({ id: t.orgId, name: 'Feed' });
  });
});
