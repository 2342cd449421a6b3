// Effective roles and entitlements through real SCIM writes: the user's own values (idp), direct
// memberships of mapped groups (group:<id>), the default only when nothing else gives one, `single`
// mode by priority, none while deactivated or deprovisioned; and a change in the feed exactly when a
// user's set of values changes.
import { beforeAll, describe, expect, it } from 'vitest';
import { readAll } from '../helpers/changes.js';
import { createGroup, unique } from '../helpers/groups.js';
import { type Harness, type Tenant, useHarness } from '../helpers/harness.js';
import { type Json, patchOp, USER } from '../helpers/scim.js';

let harness: Harness;
let t: Tenant;
useHarness(async (h) => {
  harness = h;
  const org = await h.createOrg({ name: 'Effective roles', groupSync: true });
  t = await h.tenantOf(org.id, await h.createToken(org.id));
  await h
    .admin('put', `/orgs/${org.id}/roles`)
    .send({
      roles: [
        { value: 'viewer', priority: 1 },
        { value: 'editor', priority: 5 },
        { value: 'admin', priority: 10 },
      ],
    })
    .expect(200);
  await h
    .admin('put', `/orgs/${org.id}/entitlements`)
    .send({ entitlements: [{ value: 'reports' }, { value: 'billing' }] })
    .expect(200);
});

const putMappings = (body: Record<string, unknown>) =>
  harness
    .admin('put', `/orgs/${t.orgId}/role-mappings`)
    .send({ mode: 'multiple', ...body })
    .expect(200);

async function access(userId: string): Promise<Json> {
  return (await harness.admin('get', `/orgs/${t.orgId}/users/${userId}/roles`).expect(200)).body;
}

/** A group PATCH: 204 when it changed members only, 200 with the group otherwise. */
async function patchGroup(id: string, body: unknown): Promise<void> {
  const res = await t.patch(`/Groups/${id}`, body);
  expect(res.status, res.text).toBeLessThan(300);
}

const rolesOf = async (userId: string) => (await access(userId)).roles;

async function newUser(body: Record<string, unknown> = {}): Promise<string> {
  const res = await t.post('/Users', { schemas: [USER], userName: unique('user'), ...body }).expect(201);
  return res.body.id;
}

async function cursor(): Promise<string> {
  return (await readAll(harness, { orgId: t.orgId })).nextCursor;
}

async function roleChanges(after: string, type = 'user.roles_changed'): Promise<Json[]> {
  return (await readAll(harness, { orgId: t.orgId, after, types: type })).changes;
}

describe('effective roles', () => {
  beforeAll(() => putMappings({ mappings: [] }));

  it("are the catalogued values of the user's roles, none while deactivated", async () => {
    const after = await cursor();
    const id = await newUser({ roles: [{ value: 'editor' }, { value: 'Viewer', primary: true }] });
    expect(await access(id)).toEqual({
      roles: [
        { value: 'editor', sources: ['idp'] },
        { value: 'viewer', sources: ['idp'] },
      ],
      entitlements: [],
    });
    await t.patch(`/Users/${id}`, patchOp({ op: 'replace', path: 'active', value: false })).expect(200);
    expect(await rolesOf(id)).toEqual([]);
    await t.patch(`/Users/${id}`, patchOp({ op: 'replace', path: 'title', value: 'Lead' })).expect(200);
    await t.patch(`/Users/${id}`, patchOp({ op: 'replace', path: 'active', value: true })).expect(200);
    expect((await rolesOf(id)).map((r: Json) => r.value)).toEqual(['editor', 'viewer']);

    const changes = await roleChanges(after);
    expect(changes.map((c) => [c.resourceId, c.data])).toEqual([
      [
        id,
        {
          roles: [
            { value: 'editor', sources: ['idp'] },
            { value: 'viewer', sources: ['idp'] },
          ],
          added: ['editor', 'viewer'],
          removed: [],
        },
      ],
      [id, { roles: [], added: [], removed: ['editor', 'viewer'] }],
      [
        id,
        {
          roles: [
            { value: 'editor', sources: ['idp'] },
            { value: 'viewer', sources: ['idp'] },
          ],
          added: ['editor', 'viewer'],
          removed: [],
        },
      ],
    ]);
    expect(changes[0]).toMatchObject({ type: 'user.roles_changed', resourceType: 'User', eventUri: null });
  });

  it('follow direct memberships of mapped groups, by id and by displayName', async () => {
    const [ada, bob] = [await newUser(), await newUser()];
    const editors = await createGroup(t, { displayName: unique('Editors') });
    const adminsName = unique('Admins');
    await putMappings({
      mappings: [
        { group: { id: editors.id }, role: 'editor' },
        { group: { displayName: adminsName.toUpperCase() }, role: 'admin' },
      ],
    });
    const after = await cursor();
    await patchGroup(
      editors.id,
      patchOp({ op: 'add', path: 'members', value: [{ value: ada }, { value: bob }] }),
    );
    expect(await rolesOf(ada)).toEqual([{ value: 'editor', sources: [`group:${editors.id}`] }]);
    // The group named by displayName arrives later, with a member.
    const admins = await createGroup(t, { displayName: adminsName, members: [{ value: ada }] });
    expect(await rolesOf(ada)).toEqual([
      { value: 'admin', sources: [`group:${admins.id}`] },
      { value: 'editor', sources: [`group:${editors.id}`] },
    ]);
    await patchGroup(editors.id, patchOp({ op: 'remove', path: `members[value eq "${bob}"]` }));
    expect(await rolesOf(bob)).toEqual([]);

    // A rename keeps a mapping by id and leaves one by displayName.
    await patchGroup(editors.id, patchOp({ op: 'replace', path: 'displayName', value: unique('Writers') }));
    await patchGroup(admins.id, patchOp({ op: 'replace', path: 'displayName', value: unique('Former') }));
    expect(await rolesOf(ada)).toEqual([{ value: 'editor', sources: [`group:${editors.id}`] }]);

    const changes = await roleChanges(after);
    const told = changes.map((c) => [c.resourceId, c.data.added, c.data.removed]);
    // The two members added by one PATCH are told in either order.
    expect(new Set(told.slice(0, 2).map((c) => JSON.stringify(c)))).toEqual(
      new Set([JSON.stringify([ada, ['editor'], []]), JSON.stringify([bob, ['editor'], []])]),
    );
    expect(told.slice(2)).toEqual([
      [ada, ['admin'], []],
      [bob, [], ['editor']],
      [ada, [], ['admin']],
    ]);
    // A member added to a mapped group is told the whole set it then holds, with the sources.
    expect(changes[2]!.data.roles).toEqual([
      { value: 'admin', sources: [`group:${admins.id}`] },
      { value: 'editor', sources: [`group:${editors.id}`] },
    ]);

    // A deleted group's members lose its role.
    await t.delete(`/Groups/${editors.id}`).expect(204);
    expect(await rolesOf(ada)).toEqual([]);
  });

  it('give the default only when nothing else gives a role, and keep the highest in single mode', async () => {
    const team = await createGroup(t, { displayName: unique('Team') });
    await putMappings({ mappings: [{ group: { id: team.id }, role: 'admin' }], defaultRole: 'viewer' });
    const plain = await newUser();
    const own = await newUser({ roles: [{ value: 'editor' }] });
    expect(await rolesOf(plain)).toEqual([{ value: 'viewer', sources: ['default'] }]);
    expect(await rolesOf(own)).toEqual([{ value: 'editor', sources: ['idp'] }]);
    await patchGroup(
      team.id,
      patchOp({ op: 'add', path: 'members', value: [{ value: plain }, { value: own }] }),
    );
    expect(await rolesOf(plain)).toEqual([{ value: 'admin', sources: [`group:${team.id}`] }]);

    const after = await cursor();
    await putMappings({
      mappings: [{ group: { id: team.id }, role: 'admin' }],
      defaultRole: 'viewer',
      mode: 'single',
    });
    expect(await rolesOf(own)).toEqual([{ value: 'admin', sources: [`group:${team.id}`] }]);
    const updated = (await readAll(harness, { orgId: t.orgId, after, types: 'role_mappings.updated' }))
      .changes;
    expect(updated.map((c) => [c.resourceType, c.resourceId, c.data])).toEqual([
      [
        'Org',
        t.orgId,
        { mappings: [{ group: { id: team.id }, role: 'admin' }], defaultRole: 'viewer', mode: 'single' },
      ],
    ]);
    // The same mappings again change nothing and say nothing.
    const again = await cursor();
    await putMappings({
      mappings: [{ group: { id: team.id }, role: 'admin' }],
      defaultRole: 'viewer',
      mode: 'single',
    });
    expect((await readAll(harness, { orgId: t.orgId, after: again })).changes).toEqual([]);

    await patchGroup(team.id, patchOp({ op: 'remove', path: 'members' }));
    expect(await rolesOf(plain)).toEqual([{ value: 'viewer', sources: ['default'] }]);
    expect(await rolesOf(own)).toEqual([{ value: 'editor', sources: ['idp'] }]);
    await putMappings({ mappings: [] });
    expect(await rolesOf(plain)).toEqual([]);
  });

  it('are gone when the user is deprovisioned', async () => {
    const team = await createGroup(t, { displayName: unique('Deprovisioned') });
    await putMappings({ mappings: [{ group: { id: team.id }, role: 'editor' }] });
    const id = await newUser({ roles: [{ value: 'admin' }] });
    await patchGroup(team.id, patchOp({ op: 'add', path: 'members', value: [{ value: id }] }));
    const after = await cursor();
    await t.delete(`/Users/${id}`).expect(204);
    expect(await rolesOf(id)).toEqual([]);
    expect((await roleChanges(after)).map((c) => c.data)).toEqual([
      { roles: [], added: [], removed: ['admin', 'editor'] },
    ]);
  });

  it('after member adds, are what a whole recomputation gives', async () => {
    const ops = await createGroup(t, { displayName: unique('Ops') });
    const supportName = unique('Support');
    await putMappings({
      mappings: [
        { group: { id: ops.id }, role: 'editor' },
        { group: { id: ops.id }, role: 'viewer' },
        { group: { displayName: supportName }, role: 'admin' },
      ],
      defaultRole: 'viewer',
    });
    const [plain, own, inactive, admin] = [
      await newUser(),
      await newUser({ roles: [{ value: 'editor' }] }),
      await newUser({ active: false }),
      await newUser({ roles: [{ value: 'admin' }] }),
    ];
    const users = [plain, own, inactive, admin];
    const after = await cursor();
    await patchGroup(
      ops.id,
      patchOp({ op: 'add', path: 'members', value: users.map((value) => ({ value })) }),
    );
    const support = await createGroup(t, {
      displayName: supportName,
      members: [{ value: plain }, { value: admin }],
    });
    const held = await Promise.all(users.map(rolesOf));
    expect(held).toEqual([
      [
        { value: 'admin', sources: [`group:${support.id}`] },
        { value: 'editor', sources: [`group:${ops.id}`] },
        { value: 'viewer', sources: [`group:${ops.id}`] },
      ],
      [
        { value: 'editor', sources: [`group:${ops.id}`, 'idp'] },
        { value: 'viewer', sources: [`group:${ops.id}`] },
      ],
      [],
      [
        { value: 'admin', sources: [`group:${support.id}`, 'idp'] },
        { value: 'editor', sources: [`group:${ops.id}`] },
        { value: 'viewer', sources: [`group:${ops.id}`] },
      ],
    ]);
    expect((await roleChanges(after)).map((c) => [c.resourceId, c.data])).toEqual([
      ...[
        [plain, { added: ['editor'], removed: [] }],
        [own, { added: ['viewer'], removed: [] }],
        [admin, { added: ['editor', 'viewer'], removed: [] }],
      ]
        .sort(([a], [b]) => String(a).localeCompare(String(b)))
        .map(([id, change]) => [id, expect.objectContaining(change)]),
      [plain, expect.objectContaining({ added: ['admin'], removed: [] })],
    ]);

    // A description changes nothing a user holds, but recomputes every user of the organization.
    const recomputed = await cursor();
    await harness
      .admin('put', `/orgs/${t.orgId}/roles`)
      .send({
        roles: [
          { value: 'viewer', priority: 1, description: 'Reads' },
          { value: 'editor', priority: 5 },
          { value: 'admin', priority: 10 },
        ],
      })
      .expect(200);
    expect(await Promise.all(users.map(rolesOf))).toEqual(held);
    expect(await roleChanges(recomputed)).toEqual([]);
    await putMappings({ mappings: [] });
  });
});

describe('effective entitlements', () => {
  it("are the catalogued values of the user's entitlements", async () => {
    const after = await cursor();
    const id = await newUser({ entitlements: [{ value: 'reports' }] });
    await t
      .patch(`/Users/${id}`, patchOp({ op: 'add', path: 'entitlements', value: [{ value: 'billing' }] }))
      .expect(200);
    expect((await access(id)).entitlements).toEqual([
      { value: 'billing', sources: ['idp'] },
      { value: 'reports', sources: ['idp'] },
    ]);
    await t.patch(`/Users/${id}`, patchOp({ op: 'replace', path: 'active', value: false })).expect(200);
    expect((await access(id)).entitlements).toEqual([]);
    expect((await roleChanges(after, 'user.entitlements_changed')).map((c) => c.data)).toEqual([
      { entitlements: [{ value: 'reports', sources: ['idp'] }], added: ['reports'], removed: [] },
      {
        entitlements: [
          { value: 'billing', sources: ['idp'] },
          { value: 'reports', sources: ['idp'] },
        ],
        added: ['billing'],
        removed: [],
      },
      { entitlements: [], added: [], removed: ['billing', 'reports'] },
    ]);
  });

  it('answer 404 for a user the organization does not have', async () => {
    await harness
      .admin('get', `/orgs/${t.orgId}/users/00000000-0000-4000-8000-000000000000/roles`)
      .expect(404);
    await harness.admin('get', `/orgs/${t.orgId}/users/nope/roles`).expect(404);
  });
});
