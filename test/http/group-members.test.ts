// Group members over HTTP on a real database: members must be users of the same organization that
// are not deprovisioned, and a user's read-only groups attribute.
import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type supertest from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DB } from '../../src/db/tables.js';
import { ResourceWrites } from '../../src/resources/resource-writes.js';
import { onPostgres } from '../helpers/database.js';
import {
  createGroup,
  createUser,
  createUsers,
  getGroup,
  groupCalls,
  memberIds,
  patchEntry,
  unique,
} from '../helpers/groups.js';
import { type Harness, type Tenant, useHarness } from '../helpers/harness.js';
import { expectScimError, GROUP, type Json, patchOp, USER } from '../helpers/scim.js';

/** Batched writes of these tests' own, as a process has (a transaction's writes go alone). */
const writes = new ResourceWrites();

let harness: Harness;
/** Group sync on: the tenant most tests use. */
let t: Tenant;
const { groupTenant } = groupCalls(() => harness);
// Room in the pool beside the connections the lock tests hold open, for the feed's and sync
// activity's background statements, so a test never waits for a connection rather than for its lock.
useHarness(
  async (h) => {
    harness = h;
    t = await groupTenant();
  },
  { database: { poolSize: 10 } },
);

describe('members must be users of this organization', () => {
  let otherOrgUser: string;
  let someGroup: string;
  let deprovisioned: string;
  beforeAll(async () => {
    const other = await groupTenant();
    otherOrgUser = await createUser(other);
    someGroup = (await createGroup(t, { displayName: unique('A group as member') })).id;
    // A user kept for the product after deprovisioning (the `deactivate` mode), set up directly.
    deprovisioned = await createUser(t);
    await harness.database.db
      .updateTable('users')
      .set({ deprovisioned_at: new Date(), active: false })
      .where('org_id', '=', t.orgId)
      .where('id', '=', deprovisioned)
      .execute();
  });

  /** Each case: the bad member entries, and the ids the error detail must name. */
  const BAD: [string, () => { entries: Json[]; named: string[] }][] = [
    [
      'a random uuid',
      () => {
        const id = randomUUID();
        return { entries: [{ value: id }], named: [id] };
      },
    ],
    ['a value that is not a uuid', () => ({ entries: [{ value: 'not-a-uuid' }], named: ['not-a-uuid'] })],
    ['a user of another organization', () => ({ entries: [{ value: otherOrgUser }], named: [otherOrgUser] })],
    ['a group id', () => ({ entries: [{ value: someGroup }], named: [someGroup] })],
    ['a deprovisioned user', () => ({ entries: [{ value: deprovisioned }], named: [deprovisioned] })],
    [
      'a group id typed "Group"',
      () => ({ entries: [{ value: someGroup, type: 'Group' }], named: [someGroup] }),
    ],
    [
      'two bad ids at once',
      () => {
        const id = randomUUID();
        return { entries: [{ value: id }, { value: otherOrgUser }], named: [id, otherOrgUser] };
      },
    ],
  ];

  function expectNamed(res: supertest.Response, named: string[]) {
    expectScimError(res, 400, 'invalidValue');
    for (const id of named) expect(res.body.detail).toContain(id);
  }

  it.each(BAD)('POST with %s: 400 invalidValue naming it, no group created', async (_, bad) => {
    const { entries, named } = bad();
    const good = await createUser(t);
    const name = unique('Refused create');
    const res = await t.post('/Groups', {
      schemas: [GROUP],
      displayName: name,
      members: [{ value: good }, ...entries],
    });
    expectNamed(res, named);
    expect(res.body.detail).not.toContain(good);
    const list = (await t.get(`/Groups?filter=${encodeURIComponent(`displayName eq "${name}"`)}`).expect(200))
      .body;
    expect(list.totalResults).toBe(0);
    // The name is still free.
    await createGroup(t, { displayName: name });
  });

  it.each(BAD)('PATCH add with %s among valid ones: 400, membership unchanged', async (_, bad) => {
    const { entries, named } = bad();
    const [kept, added] = await createUsers(t, 2);
    const group = await createGroup(t, { displayName: unique('Refused patch'), members: [{ value: kept }] });
    const res = await t.patch(
      `/Groups/${group.id}`,
      patchOp({ op: 'Add', path: 'members', value: [{ $ref: null, value: added }, ...entries] }),
    );
    expectNamed(res, named);
    expect(await getGroup(t, group.id)).toEqual(group);
  });

  it.each(BAD)('PATCH replace members with %s: 400, membership unchanged', async (_, bad) => {
    const { entries, named } = bad();
    const [kept, added] = await createUsers(t, 2);
    const group = await createGroup(t, {
      displayName: unique('Refused replace'),
      members: [{ value: kept }],
    });
    const res = await t.patch(
      `/Groups/${group.id}`,
      patchOp({ op: 'replace', path: 'members', value: [{ value: added }, ...entries] }),
    );
    expectNamed(res, named);
    expect(await getGroup(t, group.id)).toEqual(group);
  });

  it.each(BAD)('PUT with %s: 400, group unchanged', async (_, bad) => {
    const { entries, named } = bad();
    const [kept, added] = await createUsers(t, 2);
    const group = await createGroup(t, {
      displayName: unique('Refused put'),
      externalId: 'before',
      members: [{ value: kept }],
    });
    const res = await t.put(`/Groups/${group.id}`, {
      schemas: [GROUP],
      displayName: unique('Renamed by refused put'),
      members: [{ value: added }, ...entries],
    });
    expectNamed(res, named);
    expect(await getGroup(t, group.id)).toEqual(group);
  });

  it('answers a member deleted while its group is written with 503 to send it again, never 500', async () => {
    const [kept, doomed] = await createUsers(t, 2);
    const db = harness.database.db;
    // The user goes between the statement's check of its members and the end of the statement (and
    // comes back with the statement's rollback: a deletion that committed would make the retry a 400).
    await sql`create function delete_member() returns trigger language plpgsql as $$
      begin delete from users where id = new.user_id; return new; end $$`.execute(db);
    await sql`create trigger delete_member before insert on group_members for each row
      when (new.user_id = ${sql.lit(doomed)}::uuid) execute function delete_member()`.execute(db);
    try {
      const name = unique('Member gone on create');
      const created = await t.post('/Groups', {
        schemas: [GROUP],
        displayName: name,
        members: [{ value: kept }, { value: doomed }],
      });
      expectScimError(created, 503);
      expect(created.headers['retry-after']).toBeDefined();
      expect((await t.get(`/Groups?filter=displayName eq "${name}"`).expect(200)).body.totalResults).toBe(0);
      const group = await createGroup(t, {
        displayName: unique('Member gone on add'),
        members: [{ value: kept }],
      });
      const added = await t.patch(
        `/Groups/${group.id}`,
        patchOp({ op: 'add', path: 'members', value: [{ value: doomed }] }),
      );
      expectScimError(added, 503);
      expect(await getGroup(t, group.id)).toEqual(group);
    } finally {
      await sql`drop trigger delete_member on group_members`.execute(db);
      await sql`drop function delete_member()`.execute(db);
    }
  });

  it('refuses the Microsoft bare-string member shape for an id that is not a user', async () => {
    const group = await createGroup(t, { displayName: unique('Bare refused') });
    const res = await t.patch(
      `/Groups/${group.id}`,
      patchOp({ op: 'add', path: 'members', value: 'not-a-uuid' }),
    );
    expectNamed(res, ['not-a-uuid']);
    expect(await getGroup(t, group.id)).toEqual(group);
  });
});

describe('User.groups', () => {
  let user: string;
  let alpha: Json;
  let beta: Json;
  beforeAll(async () => {
    user = await createUser(t, { userName: unique('grouped') });
    alpha = await createGroup(t, { displayName: unique('Alpha') });
    beta = await createGroup(t, { displayName: unique('Beta'), members: [{ value: user }] });
    await t
      .patch(`/Groups/${alpha.id}`, patchOp({ op: 'add', path: 'members', value: [{ value: user }] }))
      .expect(204);
  });

  const entry = (group: Json) => ({
    value: group.id,
    $ref: `${t.baseUrl}/Groups/${group.id}`,
    display: group.displayName,
    type: 'direct',
  });
  const byValue = (a: { value: string }, b: { value: string }) => a.value.localeCompare(b.value);
  const groupsOf = async (id: string, query = '') =>
    ((await t.get(`/Users/${id}${query}`).expect(200)).body.groups ?? []).sort(byValue);

  it('shows the groups of a user on GET /Users/{id} and in lists', async () => {
    expect(await groupsOf(user)).toEqual([entry(alpha), entry(beta)].sort(byValue));
    const listed = (await t.get(`/Users?filter=${encodeURIComponent(`id eq "${user}"`)}`).expect(200)).body
      .Resources[0];
    expect([...listed.groups].sort(byValue)).toEqual([entry(alpha), entry(beta)].sort(byValue));
  });

  it('shows no groups for a user in none', async () => {
    const loner = await createUser(t);
    expect(await groupsOf(loner)).toEqual([]);
  });

  it('follows a rename of the group and a removal', async () => {
    const u = await createUser(t);
    const g = await createGroup(t, { displayName: unique('Before rename'), members: [{ value: u }] });
    const renamed = unique('After rename');
    await t
      .patch(`/Groups/${g.id}`, patchOp({ op: 'replace', path: 'displayName', value: renamed }))
      .expect(204);
    expect(await groupsOf(u)).toEqual([entry({ id: g.id, displayName: renamed })]);
    await t.patch(`/Groups/${g.id}`, patchOp({ op: 'remove', path: `members[value eq "${u}"]` })).expect(204);
    expect(await groupsOf(u)).toEqual([]);
  });

  it.each([
    ['groups.value eq "<g>"', (g: string) => `groups.value eq "${g}"`],
    ['groups[value eq "<g>"]', (g: string) => `groups[value eq "${g}"]`],
  ])('filters users with %s', async (_, f) => {
    const other = await createUser(t);
    const res = (await t.get(`/Users?filter=${encodeURIComponent(f(beta.id))}`).expect(200)).body;
    const ids = res.Resources.map((r: { id: string }) => r.id);
    expect(ids).toEqual([user]);
    expect(ids).not.toContain(other);
    expect(
      (await t.get(`/Users?filter=${encodeURIComponent(f(randomUUID()))}`).expect(200)).body.totalResults,
    ).toBe(0);
  });

  it('omits groups with excludedAttributes=groups and with attributes=userName', async () => {
    const lean = (await t.get(`/Users/${user}?excludedAttributes=groups`).expect(200)).body;
    expect(lean).not.toHaveProperty('groups');
    expect(lean.id).toBe(user);
    const only = (await t.get(`/Users/${user}?attributes=userName`).expect(200)).body;
    expect(only).not.toHaveProperty('groups');
    const listed = (
      await t
        .get(`/Users?excludedAttributes=groups&filter=${encodeURIComponent(`id eq "${user}"`)}`)
        .expect(200)
    ).body.Resources[0];
    expect(listed).not.toHaveProperty('groups');
  });

  // Okta's read-only `groups` in POST/PUT bodies and in pathless
  // PATCH values are ignored. A PATCH whose *path* names `groups` may instead get 400 mutability
  // (RFC 7644 §3.5.2); either way, memberships never change through a user.
  it('ignores groups sent in POST, PUT and PATCH of a user', async () => {
    const gamma = await createGroup(t, { displayName: unique('Gamma') });
    const delta = await createGroup(t, { displayName: unique('Delta') });
    const created = await t
      .post('/Users', {
        schemas: [USER],
        userName: unique('sneaky'),
        groups: [{ value: gamma.id, display: 'x' }],
      })
      .expect(201);
    const id = created.body.id as string;
    expect(created.body.groups ?? []).toEqual([]);
    expect(await memberIds(t, gamma.id)).toEqual([]);

    // A member of delta: PUT with other groups, or none, keeps exactly delta.
    await t
      .patch(`/Groups/${delta.id}`, patchOp({ op: 'add', path: 'members', value: [{ value: id }] }))
      .expect(204);
    const current = (await t.get(`/Users/${id}`).expect(200)).body;
    const put = await t.put(`/Users/${id}`, { ...current, groups: [{ value: gamma.id }] }).expect(200);
    expect(put.body.groups).toEqual([entry(delta)]);
    await t.put(`/Users/${id}`, { ...current, groups: [] }).expect(200);
    expect(await groupsOf(id)).toEqual([entry(delta)]);

    for (const op of [
      { op: 'replace', value: { groups: [{ value: gamma.id }] } },
      { op: 'add', value: { displayName: 'Sneaky', groups: [] } },
    ]) {
      const res = await t.patch(`/Users/${id}`, patchOp(op));
      expect(res.status, `${JSON.stringify(op)}: ${res.text}`).toBe(200);
      // The response carries the memberships too, whether or not the PATCH changed the user.
      expect(res.body.groups).toEqual([entry(delta)]);
      expect(await groupsOf(id)).toEqual([entry(delta)]);
    }
    for (const op of [
      { op: 'add', path: 'groups', value: [{ value: gamma.id }] },
      { op: 'remove', path: 'groups' },
      { op: 'replace', path: 'groups', value: [] },
    ]) {
      const res = await t.patch(`/Users/${id}`, patchOp(op));
      if (res.status >= 300) expectScimError(res, 400, 'mutability');
      else expect(res.status, `${JSON.stringify(op)}: ${res.text}`).toBe(200);
      expect(await groupsOf(id)).toEqual([entry(delta)]);
    }
    expect(await memberIds(t, gamma.id)).toEqual([]);
  });
});

// PGlite serves one connection: nothing there runs beside an open transaction.
describe.skipIf(!onPostgres)('concurrent member changes of one group', () => {
  const shardOf = async (db: Kysely<DB>) =>
    (await sql<{ shard: number }>`select pg_backend_pid() % 16 as shard`.execute(db)).rows[0]!.shard;

  /** Runs `work` on a pooled connection whose shard is not `shard` (holding the others meanwhile). */
  async function onAnotherShard<T>(shard: number, work: (db: Kysely<DB>) => Promise<T>): Promise<T> {
    return harness.database.db
      .connection()
      .execute(async (db) => ((await shardOf(db)) === shard ? onAnotherShard(shard, work) : work(db)));
  }

  it('do not wait on each other: one still open does not hold up another', async () => {
    const [first, second] = await createUsers(t, 2);
    const group = (await createGroup(t, { displayName: unique('Busy') })).id;
    const audit = (requestId: string) => patchEntry(t.orgId, group, requestId);
    const adding = (userId: string) => ({ removeAll: false, removes: [], adds: [{ userId }] });
    await harness.database.db.transaction().execute(async (open) => {
      expect(
        await writes.members.change(open, t.orgId, group, adding(first), new Date(), audit('open')),
      ).toBe('changed');
      await onAnotherShard(await shardOf(open), async (db) => {
        await sql`set lock_timeout = '3s'`.execute(db);
        try {
          const done = await writes.members.change(
            db,
            t.orgId,
            group,
            adding(second),
            new Date(),
            audit('beside'),
          );
          expect(done).toBe('changed');
        } finally {
          await sql`reset lock_timeout`.execute(db);
        }
      });
    });
    expect((await memberIds(t, group)).sort()).toEqual([first, second].sort());
  });
  /**
   * Starts `work` on a connection whose shard is not `shard`; resolves once it waits for a lock that
   * another transaction holds. Its outcome comes in `done`.
   */
  async function waitingForLock<T>(shard: number, work: (db: Kysely<DB>) => Promise<T>) {
    let pid: number | undefined;
    const done = onAnotherShard(shard, async (db) => {
      pid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0]!.pid;
      return work(db);
    });
    const waits = async () => {
      if (pid === undefined) return false;
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_locks
        where pid = ${pid} and not granted`.execute(harness.database.db);
      return rows[0]!.n > 0;
    };
    await expect.poll(waits, { timeout: 5000 }).toBe(true);
    return { done };
  }

  const adding = (...userIds: string[]) => ({
    removeAll: false,
    removes: [],
    adds: userIds.map((userId) => ({ userId })),
  });
  const removal = (userId: string) =>
    ({ ...patchEntry(t.orgId, userId, 'removal'), action: 'user.delete', resourceType: 'User' }) as const;
  const memberRows = async (userId: string) =>
    (
      await sql<{ n: number }>`select count(*)::int as n from group_members
        where org_id = ${t.orgId} and user_id = ${userId}`.execute(harness.database.db)
    ).rows[0]!.n;

  it('take the rows of members in one order, whatever order they were sent in', async () => {
    // `low` sorts first: a change sending [high, low] must wait for `low` before it holds `high`, or
    // two changes sending them in opposite orders (two processes) could wait on each other in a circle.
    const [low, high] = (await createUsers(t, 2)).sort();
    const group = (await createGroup(t, { displayName: unique('Ordered') })).id;
    const audit = (requestId: string) => patchEntry(t.orgId, group, requestId);
    const db = harness.database.db;
    let waiting: { done: Promise<string> } | undefined;
    await db.transaction().execute(async (open) => {
      expect(await writes.members.change(open, t.orgId, group, adding(low), new Date(), audit('open'))).toBe(
        'changed',
      );
      // The change waits for `low`, which the open transaction added.
      waiting = await waitingForLock(await shardOf(open), (other) =>
        writes.members.change(other, t.orgId, group, adding(high, low), new Date(), audit('waiting')),
      );
      // Meanwhile `high` is free: the waiting change has not taken it.
      await db.connection().execute(async (third) => {
        await sql`set lock_timeout = '2s'`.execute(third);
        try {
          await sql`insert into group_members (org_id, group_id, user_id, created_at)
                    values (${t.orgId}, ${group}, ${high}, now())`.execute(third);
        } finally {
          await sql`reset lock_timeout`.execute(third);
        }
      });
    });
    expect(await waiting!.done).toBe('unchanged');
    expect((await memberIds(t, group)).sort()).toEqual([low, high]);
  });

  // Every mode: `delete` removes the row (the memberships go by its foreign key), the others keep it.
  const modes = ['deactivate', 'anonymize', 'delete'] as const;

  it.each(modes)(
    'a member add meeting a deprovisioning (%s) of its user waits for it, then refuses the user',
    async (mode) => {
      const [user] = await createUsers(t, 1);
      const group = (await createGroup(t, { displayName: unique('Leaving') })).id;
      let waiting: { done: Promise<string> } | undefined;
      await harness.database.db.transaction().execute(async (open) => {
        expect(await writes.users.remove(open, t.orgId, user!, mode, new Date(), removal(user!))).toBe(true);
        waiting = await waitingForLock(await shardOf(open), (other) =>
          writes.members.change(
            other,
            t.orgId,
            group,
            adding(user!),
            new Date(),
            patchEntry(t.orgId, group, 'add'),
          ),
        );
      });
      expect(await waiting!.done).toBe('invalid');
      expect(await memberRows(user!)).toBe(0);
    },
  );

  it.each(modes)(
    'a deprovisioning (%s) meeting a member add of its user waits for it, then takes that membership too',
    async (mode) => {
      const [user] = await createUsers(t, 1);
      const group = (await createGroup(t, { displayName: unique('Joining') })).id;
      let waiting: { done: Promise<boolean> } | undefined;
      await harness.database.db.transaction().execute(async (open) => {
        const added = await writes.members.change(
          open,
          t.orgId,
          group,
          adding(user!),
          new Date(),
          patchEntry(t.orgId, group, 'add'),
        );
        expect(added).toBe('changed');
        waiting = await waitingForLock(await shardOf(open), (other) =>
          writes.users.remove(other, t.orgId, user!, mode, new Date(), removal(user!)),
        );
      });
      expect(await waiting!.done).toBe(true);
      expect(await memberRows(user!)).toBe(0);
      expect(await memberIds(t, group)).toEqual([]);
    },
  );
});
