// Groups of thousands of members, and parallel membership PATCHes on one group.
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { insertUsers } from '../helpers/groups.js';
import { ADMIN_TOKEN, type Harness, type Tenant, useHarness } from '../helpers/harness.js';

let harness: Harness;
let t: Tenant;
const MEMBERS = 3000;
let userIds: string[];

useHarness(async (h) => {
  harness = h;
  t = await h.tenant();
  await h.http
    .patch(`/admin/v1/orgs/${t.orgId}`)
    .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
    .send({ groupSync: true })
    .expect(200);
  userIds = await insertUsers(h.database.db, t.orgId, 'member', MEMBERS);
});

const patchOp = (Operations: unknown[]) => ({
  schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
  Operations,
});

it('creates a group of thousands of members through SCIM and reads it whole or without members', async () => {
  const group = (await t.post('/Groups?excludedAttributes=members', { displayName: 'Everyone' }).expect(201))
    .body;
  // Entra adds members in batches of several values per operation.
  for (let i = 0; i < MEMBERS; i += 500) {
    const batch = userIds.slice(i, i + 500).map((value) => ({ value }));
    await t.patch(`/Groups/${group.id}`, patchOp([{ op: 'add', path: 'members', value: batch }])).expect(204);
  }
  const full = (await t.get(`/Groups/${group.id}`).expect(200)).body;
  expect(full.members).toHaveLength(MEMBERS);
  expect(new Set(full.members.map((m: { value: string }) => m.value))).toEqual(new Set(userIds));
  const lean = (await t.get(`/Groups/${group.id}?excludedAttributes=members`).expect(200)).body;
  expect(lean).not.toHaveProperty('members');
  expect(lean.displayName).toBe('Everyone');

  // One member out, one member in: the rest stays.
  await t
    .patch(`/Groups/${group.id}`, patchOp([{ op: 'remove', path: `members[value eq "${userIds[7]}"]` }]))
    .expect(204);
  const count = await harness.database.db
    .selectFrom('group_members')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('group_id', '=', group.id)
    .executeTakeFirstOrThrow();
  expect(Number(count.n)).toBe(MEMBERS - 1);
  const filtered = (
    await t
      .get(
        `/Groups?filter=${encodeURIComponent(`members[value eq "${userIds[8]}"]`)}&excludedAttributes=members`,
      )
      .expect(200)
  ).body;
  expect(filtered.Resources.map((g: { id: string }) => g.id)).toEqual([group.id]);
});

it('loses no member under parallel add and remove PATCHes on one group', async () => {
  const group = (
    await t
      .post('/Groups', { displayName: 'Busy', members: userIds.slice(0, 100).map((value) => ({ value })) })
      .expect(201)
  ).body;
  // 60 requests at once: add users 100..159 one per request, remove users 0..59 one per request.
  const adds = userIds
    .slice(100, 160)
    .map((value) =>
      t.patch(`/Groups/${group.id}`, patchOp([{ op: 'add', path: 'members', value: [{ value }] }])),
    );
  const removes = userIds
    .slice(0, 60)
    .map((value) =>
      t.patch(`/Groups/${group.id}`, patchOp([{ op: 'remove', path: `members[value eq "${value}"]` }])),
    );
  const results = await Promise.all([...adds, ...removes]);
  expect(results.map((r) => r.status)).toEqual(results.map(() => 204));
  const members = (await t.get(`/Groups/${group.id}`).expect(200)).body.members.map(
    (m: { value: string }) => m.value,
  );
  expect(new Set(members)).toEqual(new Set([...userIds.slice(60, 100), ...userIds.slice(100, 160)]));
  expect(members).toHaveLength(100);
});

it('answers member PATCHes racing the deletion of their group with 204 or 404, never a 500', async () => {
  const group = (await t.post('/Groups', { displayName: 'Doomed' }).expect(201)).body;
  const adds = userIds
    .slice(200, 240)
    .map((value) =>
      t.patch(`/Groups/${group.id}`, patchOp([{ op: 'add', path: 'members', value: [{ value }] }])),
    );
  const [deleted, ...results] = await Promise.all([t.delete(`/Groups/${group.id}`), ...adds]);
  expect(deleted.status).toBe(204);
  for (const res of results) expect([204, 404]).toContain(res.status);
  const { rows } = await sql<{ n: string }>`
    select count(*) as n from group_members where group_id = ${group.id}`.execute(harness.database.db);
  expect(Number(rows[0]!.n)).toBe(0);
});
