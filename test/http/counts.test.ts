// totalResults of an unfiltered list comes from the organization's kept counts (org_counts): exact
// after every create and removal, under concurrent writes too, and spread over shards.
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { recountOrg } from '../../src/resources/counts.repository.js';
import { adminCalls } from '../helpers/admin.js';
import { onPostgres } from '../helpers/database.js';
import { type Harness, type Tenant, useHarness } from '../helpers/harness.js';
import { GROUP, USER } from '../helpers/scim.js';

let harness: Harness;
useHarness((h) => {
  harness = h;
});
const { patchOrg } = adminCalls(() => harness);

let seq = 0;
const user = (prefix = 'counted') => ({ schemas: [USER], userName: `${prefix}-${++seq}@corp.example` });
const group = () => ({ schemas: [GROUP], displayName: `Counted ${++seq}` });

/** totalResults of the unfiltered list, and what counting the table says. */
async function totals(t: Tenant, resource: 'Users' | 'Groups') {
  const listed = (await t.get(`/${resource}?count=0`).expect(200)).body.totalResults as number;
  const table = resource === 'Users' ? 'users' : 'groups';
  const visible = resource === 'Users' ? sql`and deprovisioned_at is null` : sql``;
  const { rows } = await sql<{ n: string }>`
    select count(*) as n from ${sql.table(table)} where org_id = ${t.orgId} ${visible}`.execute(
    harness.database.db,
  );
  return { listed, counted: Number(rows[0]!.n) };
}

it('counts users created, refused and removed in every deprovisioning mode', async () => {
  const t = await harness.tenant();
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) ids.push((await t.post('/Users', user()).expect(201)).body.id);
  const taken = (await t.get(`/Users/${ids[0]}`).expect(200)).body.userName;
  await t.post('/Users', { schemas: [USER], userName: taken }).expect(409);
  expect(await totals(t, 'Users')).toEqual({ listed: 6, counted: 6 });

  let expected = 6;
  for (const mode of ['deactivate', 'anonymize', 'delete'] as const) {
    await patchOrg(t.orgId, { deprovisioning: mode });
    await t.delete(`/Users/${ids.pop()}`).expect(204);
    expected -= 1;
    expect(await totals(t, 'Users'), mode).toEqual({ listed: expected, counted: expected });
  }
  // A user already gone is not counted out twice.
  await t.delete(`/Users/${ids[0]}`).expect(204);
  await t.delete(`/Users/${ids[0]}`).expect(404);
  expect(await totals(t, 'Users')).toEqual({ listed: expected - 1, counted: expected - 1 });
});

it('counts groups created and deleted', async () => {
  const t = await harness.tenant();
  await patchOrg(t.orgId, { groupSync: true });
  const ids: string[] = [];
  for (let i = 0; i < 4; i++) ids.push((await t.post('/Groups', group()).expect(201)).body.id);
  await t.delete(`/Groups/${ids[0]}`).expect(204);
  await t.delete(`/Groups/${ids[0]}`).expect(404);
  expect(await totals(t, 'Groups')).toEqual({ listed: 3, counted: 3 });
});

it('stays exact when creates and deletes race each other and the count', async () => {
  const t = await harness.tenant();
  const first = await Promise.all(
    Array.from(
      { length: 20 },
      async () => (await t.post('/Users', user('race')).expect(201)).body.id as string,
    ),
  );
  const seen: number[] = [];
  await Promise.all([
    ...Array.from({ length: 40 }, () => t.post('/Users', user('race')).expect(201)),
    ...first.slice(0, 15).map((id) => t.delete(`/Users/${id}`).expect(204)),
    ...Array.from({ length: 10 }, async () => {
      seen.push((await t.get('/Users?count=0').expect(200)).body.totalResults);
    }),
  ]);
  // Each count read during the race lies between the fewest and the most users there ever were.
  for (const n of seen) expect(n).toBeGreaterThanOrEqual(5);
  for (const n of seen) expect(n).toBeLessThanOrEqual(60);
  expect(await totals(t, 'Users')).toEqual({ listed: 45, counted: 45 });
  if (onPostgres) {
    // Concurrent creates of one organization write several rows, not one they would queue behind.
    const { rows } = await sql<{ n: string }>`
      select count(*) as n from org_counts where org_id = ${t.orgId}`.execute(harness.database.db);
    expect(Number(rows[0]!.n)).toBeGreaterThan(1);
  }
});

it('a filtered list still counts its matches', async () => {
  const t = await harness.tenant();
  for (let i = 0; i < 3; i++) await t.post('/Users', user('filtered')).expect(201);
  await t.post('/Users', user('other')).expect(201);
  const res = await t
    .get(`/Users?count=0&filter=${encodeURIComponent('userName sw "filtered-"')}`)
    .expect(200);
  expect(res.body.totalResults).toBe(3);
});

it('recountOrg counts rows written straight into the tables, and versions keep growing', async () => {
  const t = await harness.tenant();
  await t.post('/Users', user()).expect(201);
  const version = async () =>
    Number(
      (
        await sql<{
          v: string;
        }>`select coalesce(sum(users_version), 0) as v from org_counts where org_id = ${t.orgId}`.execute(
          harness.database.db,
        )
      ).rows[0]!.v,
    );
  const before = await version();
  await sql`
    insert into users (org_id, id, user_name, active, data, created_at, updated_at)
    select ${t.orgId}::uuid, gen_random_uuid(), 'bulk' || i || '@corp.example', true,
      jsonb_build_object('userName', 'bulk' || i || '@corp.example'), now(), now()
    from generate_series(1, 25) as i`.execute(harness.database.db);
  expect((await totals(t, 'Users')).listed).toBe(1);
  await recountOrg(harness.database.db, t.orgId);
  expect(await totals(t, 'Users')).toEqual({ listed: 26, counted: 26 });
  expect(await version()).toBeGreaterThan(before);
});

it('deleting an organization deletes its counts', async () => {
  const t = await harness.tenant();
  await t.post('/Users', user()).expect(201);
  await harness.admin('delete', `/orgs/${t.orgId}`).expect(204);
  const { rows } = await sql<{ n: string }>`
    select count(*) as n from org_counts where org_id = ${t.orgId}`.execute(harness.database.db);
  expect(Number(rows[0]!.n)).toBe(0);
});
