// Postgres keeps one plan for a named statement once a generic plan costs no more than the plans it
// made for each call's values; otherwise it plans the statement again on every call. These are the
// statements an IdP repeats most, run on one connection with values that differ the way real ones do.
import { type Kysely, sql } from 'kysely';
import { expect, it } from 'vitest';
import type { DB } from '../../src/db/tables.js';
import { compileSortKey, resolveSort } from '../../src/filter/sort.js';
import { recountOrg } from '../../src/resources/counts.repository.js';
import { type ListQuery, listValues } from '../../src/resources/list-query.js';
import { PagePositions } from '../../src/resources/page-positions.js';
import { ResourceWrites } from '../../src/resources/resource-writes.js';
import { listUsers, userPageStatement, userStorage } from '../../src/resources/user-pages.repository.js';
import { resourceTypes } from '../../src/schema/registry.js';
import { patchEntry } from '../helpers/groups.js';
import { type Harness, type Tenant, useHarness } from '../helpers/harness.js';

const writes = new ResourceWrites();
const positions = new PagePositions();

let harness: Harness;
let t: Tenant;
const USERS = 20_000;
const BIG = 18_000;
let bigGroup: string;
let smallGroup: string;
let spare: string[];
let otherOrg: string;

useHarness(async (h) => {
  harness = h;
  t = await h.tenant();
  const db = h.database.db;
  await sql`
    insert into users (org_id, id, user_name, external_id, display_name, active, data, created_at, updated_at)
    select ${t.orgId}::uuid, gen_random_uuid(), 'user' || i || '@corp.example', 'ext-' || i, 'User ' || i, true,
           jsonb_build_object('userName', 'user' || i || '@corp.example'),
           now() - (i || ' seconds')::interval, now()
    from generate_series(1, ${USERS}) as i`.execute(db);
  const groups = await sql<{ id: string }>`
    insert into groups (org_id, id, display_name, data, created_at, updated_at)
    select ${t.orgId}::uuid, gen_random_uuid(), name, jsonb_build_object('displayName', name), now(), now()
    from unnest(array['Everyone', 'Admins']) as name
    returning id`.execute(db);
  [bigGroup, smallGroup] = groups.rows.map((r) => r.id) as [string, string];
  // A group of most users and one of two: the sizes a real organization's groups have.
  await sql`
    insert into group_members (org_id, group_id, user_id, created_at)
    select org_id, ${bigGroup}::uuid, id, now() from users where org_id = ${t.orgId}::uuid order by id limit ${BIG}`.execute(
    db,
  );
  await sql`
    insert into group_members (org_id, group_id, user_id, created_at)
    select org_id, ${smallGroup}::uuid, id, now() from users where org_id = ${t.orgId}::uuid order by id desc limit 2`.execute(
    db,
  );
  const rest = await sql<{ id: string }>`
    select id from users where org_id = ${t.orgId}::uuid
    and id not in (select user_id from group_members where org_id = ${t.orgId}::uuid)`.execute(db);
  spare = rest.rows.map((r) => r.id);
  // A smaller organization beside it: estimates by organization now differ from one to the next.
  const other = await h.tenant();
  otherOrg = other.orgId;
  await sql`
    insert into users (org_id, id, user_name, external_id, display_name, active, data, created_at, updated_at)
    select ${other.orgId}::uuid, gen_random_uuid(), 'other' || i || '@corp.example', null, null, true,
           jsonb_build_object('userName', 'other' || i || '@corp.example'), now(), now()
    from generate_series(1, ${USERS / 4}) as i`.execute(db);
  await recountOrg(db, t.orgId);
  await sql`analyze`.execute(db);
});

/** How often the statement whose text starts with `start` was planned for its values, and generically. */
async function plansOf(db: Kysely<DB>, start: string): Promise<{ custom: number; generic: number }> {
  const { rows } = await sql<{ custom: string; generic: string }>`
    select custom_plans as custom, generic_plans as generic from pg_prepared_statements
    where starts_with(statement, ${start})`.execute(db);
  expect(rows).toHaveLength(1);
  return { custom: Number(rows[0]!.custom), generic: Number(rows[0]!.generic) };
}

it('keeps one plan for member changes, whatever the size of the group', async () => {
  await harness.database.db.connection().execute(async (db) => {
    // Small groups first: plans made for them look cheaper than any plan for a group of any size.
    const groups = [...Array(6).fill(smallGroup), ...Array(6).fill(bigGroup)] as string[];
    for (const [n, group] of groups.entries()) {
      const audit = patchEntry(t.orgId, group, `plans-${n}`);
      const changes = { removeAll: false, removes: [spare[n + 100]!], adds: [{ userId: spare[n]! }] };
      expect(await writes.members.change(db, t.orgId, group, changes, new Date(), audit)).toBe('changed');
    }
    const plans = await plansOf(
      db,
      'with "batch" as (select * from jsonb_to_recordset($1::jsonb) as batch(n integer, group_id uuid',
    );
    expect(plans.custom).toBeLessThanOrEqual(5);
    expect(plans.generic).toBeGreaterThanOrEqual(7);
  });
});

it('keeps one plan for the first page of users, by index and by cursor', async () => {
  const sortKey = compileSortKey(resolveSort(resourceTypes.User), userStorage, 'created_at');
  const byIndex: ListQuery = {
    filter: undefined,
    sortKey,
    descending: false,
    page: { kind: 'offset', offset: 0, limit: 100 },
  };
  const byCursor: ListQuery = {
    ...byIndex,
    page: { kind: 'keyset', after: undefined, backwards: false, limit: 100 },
  };
  await harness.database.db.connection().execute(async (db) => {
    for (let n = 0; n < 10; n++) {
      for (const query of [byIndex, byCursor]) {
        const page = await listUsers(db, t.orgId, query, { groups: true, positions });
        expect(page.items).toHaveLength(100);
        expect(page.total).toBe(USERS);
      }
    }
    const { rows } = await sql<{ statement: string; custom: string }>`
      select statement, custom_plans as custom from pg_prepared_statements`.execute(db);
    expect(rows.length).toBeGreaterThan(1);
    for (const row of rows) expect(Number(row.custom), row.statement).toBeLessThanOrEqual(5);
  });
});

it('keeps one plan for a page that starts after a known row, near the start or deep', async () => {
  const sortKey = compileSortKey(resolveSort(resourceTypes.User), userStorage, 'created_at');
  await harness.database.db.connection().execute(async (db) => {
    const { rows: starts } = await sql<{ value: string; id: string }>`
      select created_at::text as value, id from users where org_id = ${t.orgId}::uuid
      order by created_at, id offset 100 limit 12`.execute(db);
    // Deep starts first: plans made for them look cheaper than one for any start.
    const { rows: deep } = await sql<{ value: string; id: string }>`
      select created_at::text as value, id from users where org_id = ${t.orgId}::uuid
      order by created_at desc, id desc offset 200 limit 6`.execute(db);
    for (const after of [...deep, ...starts]) {
      const query: ListQuery = {
        filter: undefined,
        sortKey,
        descending: false,
        page: { kind: 'keyset', after, backwards: false, limit: 100 },
      };
      const page = await listUsers(db, t.orgId, query, { groups: true, positions });
      expect(page.items).toHaveLength(100);
    }
    const { rows } = await sql<{ custom: string; generic: string }>`
      select custom_plans as custom, generic_plans as generic from pg_prepared_statements
      where strpos(statement, '("users"."created_at", "users"."id") >') > 0`.execute(db);
    expect(rows).toHaveLength(1);
    expect(Number(rows[0]!.custom)).toBeLessThanOrEqual(5);
    expect(Number(rows[0]!.generic)).toBeGreaterThanOrEqual(13);
  });
});

it('keeps one plan for PATCHes merged into a user, whatever they set', async () => {
  await harness.database.db.connection().execute(async (db) => {
    const patches = [{ active: false }, { active: true }, { title: 'T' }, { name: { givenName: 'G' } }];
    for (let n = 0; n < 12; n++) {
      const id = spare[n]!;
      const audit = {
        ...patchEntry(t.orgId, id, `merge-plans-${n}`),
        action: 'user.patch',
        resourceType: 'User',
      };
      const merged = await writes.users.merge(
        db,
        t.orgId,
        id,
        patches[n % patches.length]!,
        new Date(),
        audit,
      );
      expect(merged?.id).toBe(id);
    }
    const plans = await plansOf(
      db,
      'with "batch" as (select * from jsonb_to_recordset($1::jsonb) as batch(n integer, id uuid, value jsonb',
    );
    expect(plans.custom).toBeLessThanOrEqual(5);
    expect(plans.generic).toBeGreaterThanOrEqual(7);
  });
});

it('plans a page alike whichever organization asks, so that one plan serves them all', async () => {
  const sortKey = compileSortKey(resolveSort(resourceTypes.User), userStorage, 'created_at');
  const query: ListQuery = {
    filter: undefined,
    sortKey,
    descending: false,
    page: { kind: 'keyset', after: undefined, backwards: false, limit: 100 },
  };
  const { sql: text } = userPageStatement(query, true).bind(listValues(t.orgId, query));
  await harness.database.db.connection().execute(async (db) => {
    await sql.raw(`prepare org_page as ${text}`).execute(db);
    await sql`set plan_cache_mode = force_custom_plan`.execute(db);
    const cost = async (org: string) => {
      const { rows } = await sql<{ 'QUERY PLAN': [{ Plan: { 'Total Cost': number } }] }>`
        explain (format json) execute org_page(${sql.lit(org)})`.execute(db);
      return rows[0]!['QUERY PLAN'][0].Plan['Total Cost'];
    };
    expect(await cost(t.orgId)).toBe(await cost(otherOrg));
    await sql`reset plan_cache_mode`.execute(db);
    await sql`deallocate org_page`.execute(db);
  });
});
