// Concurrent creates of one organization's users share statements (src/resources/user-creates.ts):
// each still gets its own answer, its own audit entry and its place in the count, and a name taken
// twice in one batch is created once and refused once.
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { type Harness, useHarness } from '../helpers/harness.js';
import { type Json, USER } from '../helpers/scim.js';

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
