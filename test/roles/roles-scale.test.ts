// Roles at scale and under concurrency: mapping a group of thousands recomputes its members 1,000 at a
// time, each once, with one change each; a member added to a mapped group costs one user's
// recomputation; writes racing each other (a deactivation and a membership, two memberships, a mapping
// and a membership) leave what a recomputation from the committed state gives.
import { sql } from 'kysely';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { refreshOrg } from '../../src/roles/roles.repository.js';
import { readAll } from '../helpers/changes.js';
import { onPostgres } from '../helpers/database.js';
import { createGroup, insertUsers, unique } from '../helpers/groups.js';
import { type Harness, type Tenant, useHarness } from '../helpers/harness.js';
import { patchOp, USER } from '../helpers/scim.js';

let harness: Harness;
let t: Tenant;
const MEMBERS = 2500;
let userIds: string[];
let everyone: { id: string };

useHarness(async (h) => {
  harness = h;
  const org = await h.createOrg({ name: 'Roles at scale', groupSync: true });
  t = await h.tenantOf(org.id, await h.createToken(org.id));
  await h
    .admin('put', `/orgs/${org.id}/roles`)
    .send({ roles: [{ value: 'staff' }, { value: 'lead', priority: 10 }, { value: 'ops' }] })
    .expect(200);
  userIds = await insertUsers(h.database.db, org.id, 'member', MEMBERS);
  everyone = await createGroup(t, { displayName: 'Everyone' });
  await sql`insert into group_members (org_id, group_id, user_id, created_at)
    select ${org.id}::uuid, ${everyone.id}::uuid, id, now() from unnest(${userIds}::uuid[]) as id`.execute(
    h.database.db,
  );
});

const putMappings = (mappings: unknown[]) =>
  harness.admin('put', `/orgs/${t.orgId}/role-mappings`).send({ mappings, mode: 'multiple' });

async function rolesOf(userId: string): Promise<string[]> {
  const res = await harness.admin('get', `/orgs/${t.orgId}/users/${userId}/roles`).expect(200);
  return res.body.roles.map((r: { value: string; sources: string[] }) => `${r.value} ${r.sources.join(',')}`);
}

describe('a large mapped group', () => {
  it('is recomputed whole by the mapping, each member once, with one change each', async () => {
    const after = (await readAll(harness, { orgId: t.orgId })).nextCursor;
    await putMappings([{ group: { displayName: 'everyone' }, role: 'staff' }]).expect(200);
    const { rows } = await sql<{ n: number }>`
      select count(*)::integer as n from user_roles where org_id = ${t.orgId} and role = 'staff'`.execute(
      harness.database.db,
    );
    expect(rows[0]!.n).toBe(MEMBERS);
    const changes = (await readAll(harness, { orgId: t.orgId, after, types: 'user.roles_changed' })).changes;
    expect(changes).toHaveLength(MEMBERS);
    expect(new Set(changes.map((c) => c.resourceId))).toEqual(new Set(userIds));
    expect(changes[0].data).toEqual({
      roles: [{ value: 'staff', sources: [`group:${everyone.id}`] }],
      added: ['staff'],
      removed: [],
    });
  });

  it('recomputes 1,000 users a statement', async () => {
    await harness.database.db.transaction().execute(async (trx) => {
      await sql`set local track_functions = 'pl'`.execute(trx);
      await refreshOrg(trx, t.orgId, { ids: [everyone.id], names: [] }, { roles: true, entitlements: false });
      const { rows } = await sql<{ funcname: string; calls: string }>`
        select funcname, calls from pg_stat_xact_user_functions
        where funcname in ('scim_user_roles_refresh', 'scim_access_refresh') order by funcname`.execute(trx);
      // A statement of its own for each batch: each within the statement time limit.
      expect(rows.map((r) => [r.funcname, Number(r.calls)])).toEqual([
        ['scim_access_refresh', Math.ceil(MEMBERS / 1000)],
        ['scim_user_roles_refresh', Math.ceil(MEMBERS / 1000)],
      ]);
    });
  });

  it('recomputes only the member added, and tells the feed', async () => {
    const newcomer = (await t.post('/Users', { schemas: [USER], userName: unique('newcomer') }).expect(201))
      .body.id;
    const after = (await readAll(harness, { orgId: t.orgId })).nextCursor;
    await t.patch(
      `/Groups/${everyone.id}`,
      patchOp({ op: 'add', path: 'members', value: [{ value: newcomer }] }),
    );
    expect(await rolesOf(newcomer)).toEqual([`staff group:${everyone.id}`]);
    const changes = (await readAll(harness, { orgId: t.orgId, after, types: 'user.roles_changed' })).changes;
    expect(changes.map((c) => c.resourceId)).toEqual([newcomer]);
  });
});

/** Runs `work` in a transaction on a connection of its own (not the app's pool), then commits. */
async function apart(work: (query: (text: string, values: unknown[]) => Promise<unknown>) => Promise<void>) {
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(`set search_path = ${harness.database.schema}`);
    await client.query('begin');
    await work((text, values) => client.query(text, values));
    await client.query('commit');
  } finally {
    await client.end();
  }
}

/** Resolves once `count` other sessions wait for a lock this session holds (pg_blocking_pids). */
async function waitForBlocked(query: (text: string, values: unknown[]) => Promise<unknown>, count: number) {
  for (;;) {
    const res = (await query(
      'select count(*)::integer as n from pg_stat_activity where pg_backend_pid() = any(pg_blocking_pids(pid))',
      [],
    )) as { rows: { n: number }[] };
    if (res.rows[0]!.n >= count) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('concurrent writes', () => {
  let leads: { id: string };
  let ops: { id: string };
  beforeAll(async () => {
    leads = await createGroup(t, { displayName: unique('Leads') });
    ops = await createGroup(t, { displayName: unique('Ops') });
    await putMappings([
      { group: { displayName: 'everyone' }, role: 'staff' },
      { group: { id: leads.id }, role: 'lead' },
      { group: { id: ops.id }, role: 'ops' },
    ]).expect(200);
  });

  const addTo = (groupId: string, userId: string) =>
    t.patch(`/Groups/${groupId}`, patchOp({ op: 'add', path: 'members', value: [{ value: userId }] }));

  it('leave a user deactivated while it joins a mapped group without roles', async () => {
    const users = userIds.slice(100, 110);
    const results = await Promise.all(
      users.flatMap((id) => [
        addTo(leads.id, id),
        t.patch(`/Users/${id}`, patchOp({ op: 'replace', path: 'active', value: false })),
      ]),
    );
    for (const res of results) expect(res.status, res.text).toBeLessThan(300);
    for (const id of users) expect(await rolesOf(id)).toEqual([]);
  });

  // Deterministic: the deactivation holds its transaction open while the membership is written.
  it.skipIf(!onPostgres)(
    'make a membership written during an uncommitted deactivation wait for it',
    async () => {
      const id = userIds[150]!;
      let added: Promise<{ status: number; text: string }> | undefined;
      await apart(async (query) => {
        await query(
          `update users set active = false, data = data || '{"active": false}' where org_id = $1 and id = $2`,
          [t.orgId, id],
        );
        added = addTo(leads.id, id).then((res) => res);
        await waitForBlocked(query, 1);
      });
      const res = await added!;
      expect(res.status, res.text).toBeLessThan(300);
      expect(await rolesOf(id)).toEqual([]);
    },
  );

  it.skipIf(!onPostgres)(
    'make a recomputation during an uncommitted one of the same user wait for it',
    async () => {
      const id = userIds[160]!;
      await addTo(ops.id, id).expect(204);
      expect(await rolesOf(id)).toEqual([`ops group:${ops.id}`, `staff group:${everyone.id}`]);
      const after = (await readAll(harness, { orgId: t.orgId })).nextCursor;
      let added: Promise<{ status: number; text: string }> | undefined;
      await apart(async (query) => {
        // Leaves the group mapped to ops: its recomputation holds the user's row until the commit.
        await query('delete from group_members where org_id = $1 and group_id = $2 and user_id = $3', [
          t.orgId,
          ops.id,
          id,
        ]);
        added = addTo(leads.id, id).then((res) => res);
        await waitForBlocked(query, 1);
      });
      const res = await added!;
      expect(res.status, res.text).toBeLessThan(300);
      expect(await rolesOf(id)).toEqual([`lead group:${leads.id}`, `staff group:${everyone.id}`]);
      // The second recomputation saw the first's result: its change tells the set as it is.
      const changes = (await readAll(harness, { orgId: t.orgId, after, types: 'user.roles_changed' }))
        .changes;
      expect(
        changes.map((c) => [
          c.data.roles.map((r: { value: string }) => r.value),
          c.data.added,
          c.data.removed,
        ]),
      ).toEqual([
        [['staff'], [], ['ops']],
        [['lead', 'staff'], ['lead'], []],
      ]);
    },
  );

  it('give a user joining two mapped groups at once both roles', async () => {
    const users = userIds.slice(200, 210);
    await Promise.all(users.flatMap((id) => [addTo(leads.id, id), addTo(ops.id, id)]));
    for (const id of users) {
      expect(await rolesOf(id)).toEqual([
        `lead group:${leads.id}`,
        `ops group:${ops.id}`,
        `staff group:${everyone.id}`,
      ]);
    }
  });

  // A mapping change holds the organization's roles lock, then locks the users it recomputes.
  it.skipIf(!onPostgres)(
    'wait for a mapping change before locking their users, so that it never waits for them in a circle',
    async () => {
      const [added, removed] = [userIds[400]!, userIds[401]!];
      let writes: Promise<{ status: number; text: string }>[] = [];
      await apart(async (query) => {
        await query(`select pg_advisory_xact_lock(hashtextextended('scimd.roles:' || $1::text, 0))`, [
          t.orgId,
        ]);
        writes = [addTo(ops.id, added).then((res) => res), t.delete(`/Users/${removed}`).then((res) => res)];
        await waitForBlocked(query, 2);
        // Would fail (lock_not_available) if either write held its user while waiting for the lock.
        await query(
          'select 1 from users where org_id = $1 and id = any($2::uuid[]) order by id for no key update nowait',
          [t.orgId, [added, removed]],
        );
      });
      for (const res of await Promise.all(writes)) expect(res.status, res.text).toBeLessThan(300);
      expect(await rolesOf(added)).toEqual([`ops group:${ops.id}`, `staff group:${everyone.id}`]);
    },
  );

  it('agree with a recomputation from scratch after mappings and memberships race', async () => {
    const users = userIds.slice(300, 320);
    await Promise.all([
      ...users.map((id) => addTo(ops.id, id)),
      putMappings([
        { group: { id: leads.id }, role: 'lead' },
        { group: { id: ops.id }, role: 'staff' },
      ]),
      ...users.map((id) =>
        t.patch(`/Groups/${everyone.id}`, patchOp({ op: 'remove', path: `members[value eq "${id}"]` })),
      ),
    ]);
    const db = harness.database.db;
    const snapshot = () =>
      sql<{ user_id: string; role: string; sources: string[] }>`
        select user_id, role, sources from user_roles where org_id = ${t.orgId} order by user_id, role`.execute(
        db,
      );
    const before = (await snapshot()).rows;
    await refreshOrg(db, t.orgId, null, { roles: true, entitlements: true });
    expect((await snapshot()).rows).toEqual(before);
    for (const id of users) expect(await rolesOf(id)).toEqual([`staff group:${ops.id}`]);
  });
});
