// Concurrent writes of one organization share statements (src/db/write-batches.ts): each still gets
// its own answer, its own audit entry and its place in the count; a value taken twice in one batch is
// written once and refused once; two writes of one resource keep their order.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { ResourceWrites } from '../../src/resources/resource-writes.js';
import { type Harness, type Tenant, useHarness } from '../helpers/harness.js';
import { GROUP, type Json, patchOp, USER } from '../helpers/scim.js';

const writes = new ResourceWrites();

let harness: Harness;
useHarness((h) => {
  harness = h;
});

it('answers each of many concurrent creates on its own, duplicates within a batch included', async () => {
  const t = await harness.tenant();
  const names = Array.from({ length: 40 }, (_, i) => `batch-${i % 30}@corp.example`);
  const answers = await Promise.all(names.map((userName) => t.post('/Users', { schemas: [USER], userName })));
  const byName = new Map<string, number[]>();
  for (const [i, res] of answers.entries())
    byName.set(names[i]!, [...(byName.get(names[i]!) ?? []), res.status]);
  for (const [name, statuses] of byName) {
    expect(
      statuses.filter((s) => s === 201),
      name,
    ).toHaveLength(1);
    expect(
      statuses.filter((s) => s !== 201).every((s) => s === 409),
      name,
    ).toBe(true);
  }
  const created = answers.filter((r) => r.status === 201);
  expect(created).toHaveLength(30);
  for (const res of created) {
    const read = await t.get(`/Users/${res.body.id}`).expect(200);
    expect(read.body.userName).toBe(res.body.userName);
    expect(read.body.meta.created).toBe(res.body.meta.created);
  }

  const listed = (await t.get('/Users?count=0').expect(200)).body.totalResults;
  const { rows } = await sql<{
    n: string;
  }>`select count(*) as n from users where org_id = ${t.orgId}`.execute(harness.database.db);
  expect(listed).toBe(30);
  expect(Number(rows[0]!.n)).toBe(30);

  const events: Json[] = (await harness.admin('get', `/orgs/${t.orgId}/events?limit=100`).expect(200)).body
    .events;
  const creates = events.filter((e) => e.action === 'user.create');
  expect(
    creates
      .filter((e) => e.status === 201)
      .map((e) => e.resourceId)
      .sort(),
  ).toEqual(created.map((r) => r.body.id as string).sort());
  expect(creates.filter((e) => e.status === 409)).toHaveLength(10);
  const requestIds = new Set(answers.map((r) => r.headers['x-request-id']));
  expect(creates.every((e) => requestIds.has(e.requestId))).toBe(true);
  expect(new Set(creates.map((e) => e.requestId)).size).toBe(40);
});

/** The organization's audit entries of `action`, newest first. */
async function entriesOf(t: Tenant, action: string): Promise<Json[]> {
  const events: Json[] = (await harness.admin('get', `/orgs/${t.orgId}/events?limit=500`).expect(200)).body
    .events;
  return events.filter((e) => e.action === action);
}

/** `n` users created one by one: their ids. */
async function usersOf(t: Tenant, n: number, prefix: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++)
    ids.push(
      (await t.post('/Users', { schemas: [USER], userName: `${prefix}-${i}@corp.example` }).expect(201)).body
        .id,
    );
  return ids;
}

it('answers each of many concurrent PATCHes and PUTs on its own, a name already taken included', async () => {
  const t = await harness.tenant();
  const ids = await usersOf(t, 30, 'update');
  const answers = await Promise.all(
    ids.map((id, i) =>
      i % 3 === 0
        ? // Two of the PUTs take the userName of another user: they alone are refused.
          t.put(`/Users/${id}`, {
            schemas: [USER],
            userName: i === 3 || i === 6 ? 'update-1@corp.example' : `update-${i}@corp.example`,
            title: `Put ${i}`,
          })
        : t.patch(`/Users/${id}`, patchOp({ op: 'replace', path: 'title', value: `Patched ${i}` })),
    ),
  );
  for (const [i, res] of answers.entries()) {
    expect(res.status, `${i}: ${res.text}`).toBe(i === 3 || i === 6 ? 409 : 200);
    if (res.status === 200) expect(res.body.title).toBe(i % 3 === 0 ? `Put ${i}` : `Patched ${i}`);
  }
  for (const [i, id] of ids.entries()) {
    const read = (await t.get(`/Users/${id}`).expect(200)).body;
    expect(read.userName).toBe(`update-${i}@corp.example`);
    expect(read.title).toBe(i === 3 || i === 6 ? undefined : i % 3 === 0 ? `Put ${i}` : `Patched ${i}`);
  }
  const written = [...(await entriesOf(t, 'user.patch')), ...(await entriesOf(t, 'user.replace'))];
  expect(
    written
      .filter((e) => e.status === 200)
      .map((e) => e.resourceId)
      .sort(),
  ).toEqual(ids.filter((_, i) => i !== 3 && i !== 6).sort());
  expect(
    written
      .filter((e) => e.status === 409)
      .map((e) => e.resourceId)
      .sort(),
  ).toEqual([ids[3], ids[6]].sort());
  expect(new Set(written.map((e) => e.requestId)).size).toBe(30);
});

it('applies concurrent PATCHes of one user in the order they came, each on what the one before wrote', async () => {
  const t = await harness.tenant();
  const [id] = await usersOf(t, 1, 'ordered');
  const answers = await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      t.patch(
        `/Users/${id}`,
        patchOp({ op: 'add', path: 'emails', value: [{ type: `t${i}`, value: `e${i}@x.example` }] }),
      ),
    ),
  );
  expect(answers.map((r) => r.status)).toEqual(Array(12).fill(200));
  const emails = (await t.get(`/Users/${id}`).expect(200)).body.emails as Json[];
  expect(emails.map((e) => e.type).sort()).toEqual(Array.from({ length: 12 }, (_, i) => `t${i}`).sort());
});

it('removes each of many concurrent DELETEs once: a repeated one answers 404', async () => {
  const t = await harness.tenant();
  const ids = await usersOf(t, 20, 'removed');
  const sent = [...ids, ...ids.slice(0, 5)];
  const answers = await Promise.all(sent.map((id) => t.delete(`/Users/${id}`)));
  const statuses = new Map<string, number[]>();
  for (const [i, res] of answers.entries())
    statuses.set(sent[i]!, [...(statuses.get(sent[i]!) ?? []), res.status]);
  for (const [id, seen] of statuses)
    expect(seen.sort(), id).toEqual(ids.indexOf(id) < 5 ? [204, 404] : [204]);
  expect((await t.get('/Users?count=0').expect(200)).body.totalResults).toBe(0);
  const deletes = await entriesOf(t, 'user.delete');
  expect(
    deletes
      .filter((e) => e.status === 204)
      .map((e) => e.resourceId)
      .sort(),
  ).toEqual([...ids].sort());
  expect(deletes.filter((e) => e.status === 404)).toHaveLength(5);
});

it('creates each of many concurrent groups on its own, refusing only a taken name and a non-user member', async () => {
  const org = await harness.createOrg({ name: 'Batched', groupSync: true });
  const t = await harness.tenantOf(org.id, await harness.createToken(org.id));
  const users = await usersOf(t, 3, 'grouped');
  const names = Array.from({ length: 24 }, (_, i) => (i === 20 ? 'Group 0' : `Group ${i}`));
  const answers = await Promise.all(
    names.map((displayName, i) =>
      t.post('/Groups', {
        schemas: [GROUP],
        displayName,
        members: i === 21 ? [{ value: users[0] }, { value: org.id }] : [{ value: users[i % 3] }],
      }),
    ),
  );
  const statuses = answers.map((r) => r.status);
  expect(statuses.filter((s, i) => i !== 21 && (s === 201 || s === 409))).toHaveLength(23);
  expect(statuses[21]).toBe(400);
  expect(statuses.filter((s) => s === 409)).toHaveLength(1);
  const created = answers.filter((r) => r.status === 201);
  expect(created).toHaveLength(22);
  for (const res of created) {
    const read = (await t.get(`/Groups/${res.body.id}`).expect(200)).body;
    expect(read.members.map((m: Json) => m.value)).toEqual([users[names.indexOf(res.body.displayName) % 3]]);
  }
  expect((await t.get('/Groups?count=0').expect(200)).body.totalResults).toBe(22);
  const creates = await entriesOf(t, 'group.create');
  expect(creates.filter((e) => e.status === 201)).toHaveLength(22);
  expect(creates).toHaveLength(24);
});

it('applies many concurrent member changes of one group, each with its own answer', async () => {
  const org = await harness.createOrg({ name: 'Batched', groupSync: true });
  const t = await harness.tenantOf(org.id, await harness.createToken(org.id));
  const users = await usersOf(t, 30, 'member');
  const group = (
    await t
      .post('/Groups', {
        schemas: [GROUP],
        displayName: 'Everyone',
        members: users.slice(25).map((value) => ({ value })),
      })
      .expect(201)
  ).body.id;
  const add = (value: string) => patchOp({ op: 'add', path: 'members', value: [{ value }] });
  const remove = (value: string) => patchOp({ op: 'remove', path: `members[value eq "${value}"]` });
  const answers = await Promise.all([
    ...users.slice(0, 20).map((id) => t.patch(`/Groups/${group}`, add(id))),
    // The same member added twice, then removed: the removal comes last.
    t.patch(`/Groups/${group}`, add(users[20]!)),
    t.patch(`/Groups/${group}`, add(users[20]!)),
    t.patch(`/Groups/${group}`, remove(users[20]!)),
    ...users.slice(25).map((id) => t.patch(`/Groups/${group}`, remove(id))),
    // Not a user of the organization: refused alone.
    t.patch(`/Groups/${group}`, add(org.id)),
  ]);
  expect(answers.slice(0, -1).map((r) => r.status)).toEqual(Array(28).fill(204));
  expect(answers.at(-1)!.status).toBe(400);
  const members = ((await t.get(`/Groups/${group}`).expect(200)).body.members as Json[]).map((m) => m.value);
  expect(members.sort()).toEqual(users.slice(0, 20).sort());
  const patches = await entriesOf(t, 'group.patch');
  expect(patches.filter((e) => e.status === 204)).toHaveLength(28);
  expect(patches.filter((e) => e.status === 400)).toHaveLength(1);
});

it('keeps one user’s writes in order when the organization’s view of the pool is rebuilt while they wait', async () => {
  const t = await harness.tenant();
  const id = (await t.post('/Users', { schemas: [USER], userName: 'rebuilt@corp.example' }).expect(201)).body
    .id;
  const db = harness.database.db;
  // The first write takes a while, so the second waits in the organization's queue meanwhile.
  await sql`create function slow_first() returns trigger language plpgsql as $$
    begin perform pg_sleep(0.3); return new; end $$`.execute(db);
  await sql`create trigger slow_first before update on users for each row
    when (new.data->>'title' = 'first') execute function slow_first()`.execute(db);
  try {
    const audit = (requestId: string) => ({
      orgId: t.orgId,
      actor: 'test',
      action: 'user.patch',
      resourceType: 'User',
      resourceId: id,
      status: 200,
      requestId,
    });
    const write = (view: typeof db, title: string) =>
      writes.users
        .merge(view, t.orgId, id, { title }, new Date(), audit(title))
        .then(() => applied.push(title));
    const applied: string[] = [];
    const old = harness.database.forOrg(t.orgId);
    const first = write(old, 'first');
    const second = write(old, 'second');
    // Requests naming many other organizations push this one's view out of the cache of views.
    for (let i = 0; i < 10_000; i++) harness.database.forOrg(randomUUID());
    const rebuilt = harness.database.forOrg(t.orgId);
    expect(rebuilt).not.toBe(old);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await Promise.all([first, second, write(rebuilt, 'third')]);
    expect(applied).toEqual(['first', 'second', 'third']);
    expect((await t.get(`/Users/${id}`).expect(200)).body.title).toBe('third');
  } finally {
    await sql`drop trigger slow_first on users`.execute(db);
    await sql`drop function slow_first()`.execute(db);
  }
});
