// The filters IdPs send use an index: EXPLAIN the exact query the server runs, on a seeded table.
import { CompiledQuery, sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { param, type Statement, statement } from '../../src/db/statement.js';
import { parseFilter } from '../../src/filter/parse.js';
import { planFilter } from '../../src/filter/plan.js';
import { resolveFilter } from '../../src/filter/resolve.js';
import { compileSortKey, resolveSort } from '../../src/filter/sort.js';
import { groupPageStatement, groupPositionStatement } from '../../src/resources/groups.repository.js';
import { groupStorage } from '../../src/resources/groups.storage.js';
import { type ListQuery, listValues } from '../../src/resources/list-query.js';
import {
  userPageStatement,
  userPositionStatement,
  userStorage,
} from '../../src/resources/user-pages.repository.js';
import { userWriteStatements } from '../../src/resources/user-writes.repository.js';
import { resourceTypes } from '../../src/schema/registry.js';
import { type Harness, type Tenant, useHarness } from '../helpers/harness.js';

let harness: Harness;
let t: Tenant;
const SEEDED = 5000;

useHarness(async (h) => {
  harness = h;
  t = await h.tenant();
  const other = await h.tenant();
  // Two organizations of seeded users, written straight into the table.
  for (const orgId of [t.orgId, other.orgId]) {
    await sql`
      insert into users (org_id, id, user_name, external_id, display_name, active, data, created_at, updated_at)
      select ${orgId}::uuid, gen_random_uuid(), 'user' || i || '@corp.example', 'ext-' || i, 'User ' || i, true,
             jsonb_build_object('userName', 'user' || i || '@corp.example', 'externalId', 'ext-' || i,
               'emails', jsonb_build_array(jsonb_build_object('type', 'work', 'value', 'user' || i || '@corp.example', 'primary', true))),
             now() - (i || ' seconds')::interval, now()
      from generate_series(1, ${SEEDED}) as i`.execute(h.database.db);
  }
  await sql`analyze users`.execute(h.database.db);
  // Groups of the first organization, five members each, so user plans meet real membership rows.
  const db = h.database.db;
  await sql`
    insert into groups (org_id, id, display_name, external_id, data, created_at, updated_at)
    select ${t.orgId}::uuid, gen_random_uuid(), 'Group ' || i, 'g-' || i,
           jsonb_build_object('displayName', 'Group ' || i), now(), now()
    from generate_series(1, ${SEEDED}) as i`.execute(db);
  // Every group gets five members.
  await sql`
    insert into group_members (org_id, group_id, user_id, created_at)
    select g.org_id, g.id, u.id, now()
    from (select org_id, id, row_number() over (order by id) as n from groups where org_id = ${t.orgId}::uuid) g
    join (select id, row_number() over (order by id) as n from users where org_id = ${t.orgId}::uuid) u
      on u.n between (g.n * 5) % ${SEEDED} and (g.n * 5) % ${SEEDED} + 4`.execute(db);
  await sql`analyze groups`.execute(db);
  await sql`analyze group_members`.execute(db);
});

/** The plan Postgres makes for a page statement run with the query's values, as JSON. */
async function explain(
  statement: Statement<unknown>,
  query: ListQuery,
  analyze = false,
): Promise<{ Plan: PlanNode }[]> {
  const bound = statement.bind(listValues(t.orgId, query));
  const result = await harness.database.db.executeQuery<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
    CompiledQuery.raw(`explain (${analyze ? 'analyze, ' : ''}format json) ${bound.sql}`, [
      ...bound.parameters,
    ]),
  );
  return result.rows[0]!['QUERY PLAN'];
}

function userQuery(filter: string, page: ListQuery['page'], sortBy?: string): ListQuery {
  return {
    filter: planFilter(resolveFilter(parseFilter(filter), resourceTypes.User), userStorage),
    sortKey: compileSortKey(resolveSort(resourceTypes.User, sortBy), userStorage, 'created_at'),
    descending: false,
    page,
  };
}

async function plan(
  filter: string,
  query: { sortBy?: string; cursorAfter?: { value: string; id: string } } = {},
) {
  const page: ListQuery['page'] = query.cursorAfter
    ? { kind: 'keyset', after: query.cursorAfter, backwards: false, limit: 100 }
    : { kind: 'offset', offset: 0, limit: 100 };
  const listing = userQuery(filter, page, query.sortBy);
  // As the server runs it when the response carries `groups`: each user's memberships in a subquery.
  return JSON.stringify(await explain(userPageStatement(listing, true), listing));
}

interface PlanNode {
  'Node Type': string;
  'Parent Relationship'?: string;
  Plans?: PlanNode[];
}

/** The node types of a plan's own tree, leaving out its subplans (each user's groups). */
function outerNodeTypes(text: string): string[] {
  const walk = (node: PlanNode): string[] => [
    node['Node Type'],
    ...(node.Plans ?? []).filter((c) => c['Parent Relationship'] !== 'SubPlan').flatMap(walk),
  ];
  return walk((JSON.parse(text) as { Plan: PlanNode }[])[0]!.Plan);
}

/** The subplans of a plan, as text. */
function subPlans(text: string): string {
  const found: PlanNode[] = [];
  const walk = (node: PlanNode): void => {
    for (const child of node.Plans ?? []) {
      if (child['Parent Relationship'] === 'SubPlan') found.push(child);
      else walk(child);
    }
  };
  walk((JSON.parse(text) as { Plan: PlanNode }[])[0]!.Plan);
  return JSON.stringify(found);
}

/** The tables a plan reads whole (Seq Scan), subplans and CTEs included. */
function seqScanned(plan: unknown): string[] {
  const found: string[] = [];
  const walk = (node: PlanNode & { 'Relation Name'?: string }): void => {
    if (node['Node Type'] === 'Seq Scan') found.push(node['Relation Name']!);
    for (const child of node.Plans ?? []) walk(child);
  };
  for (const root of plan as { Plan: PlanNode }[]) walk(root.Plan);
  return found;
}

it.each([
  ['userName eq', 'userName eq "USER42@corp.example"', 'users_org_user_name_ci'],
  ['externalId eq', 'externalId eq "ext-42"', 'users_org_external_id'],
  ["Entra's email match", 'emails[type eq "work"].value eq "user42@corp.example"', 'users_emails_ci'],
  ['id eq', 'id eq "2819c223-7f76-453a-919d-413861904646"', 'users_pkey'],
])('%s uses an index', async (_, filter, index) => {
  const text = await plan(filter);
  expect(text).toMatch(/Index Scan|Bitmap Index Scan|Index Only Scan/);
  expect(text).toContain(index);
  expect(text).not.toMatch(/"Node Type":"Seq Scan"/);
});

it('estimates a userName match at one row, so that no organization size makes Postgres walk another index', async () => {
  const listing = userQuery('userName eq "user42@corp.example"', { kind: 'offset', offset: 0, limit: 100 });
  const text = JSON.stringify(await explain(userPageStatement(listing, false), listing));
  const rows = [...text.matchAll(/"Relation Name":"users"[^}]*?"Plan Rows":(\d+)/g)].map((m) => Number(m[1]));
  expect(rows.length).toBeGreaterThan(0);
  for (const n of rows) expect(n).toBeLessThanOrEqual(2);
});

it('indexes the lower-cased values of a multi-valued attribute, whatever the shape of its JSON', async () => {
  // The GIN index holds these arrays: a rewrite of scim_lower_values must give the same results.
  const { rows } = await sql<{ n: number; ci: unknown[] }>`
    select n, scim_lower_values(items) as ci from (values
      (1, '[{"value": "Ana@X.example", "type": "work"}, {"value": "ÉLODIE@x"}]'::jsonb),
      (2, '[{"type": "work"}, {"value": "b@Y"}]'::jsonb),
      (3, '[]'::jsonb),
      (4, '{"value": "not-an-array@x"}'::jsonb),
      (5, '[{"value": "Quote\\"Back\\\\slash\\nLine@X"}]'::jsonb),
      (6, null)) as t(n, items)
    order by n`.execute(harness.database.db);
  expect(rows.map((r) => r.ci)).toEqual([
    ['ana@x.example', 'élodie@x'],
    ['b@y'],
    [],
    [],
    ['quote"back\\slash\nline@x'],
    [],
  ]);
});

it('a cursor page deep into the organization reads the creation-order index, not the whole table', async () => {
  const deep = (await t.get('/Users?attributes=id&startIndex=4000&count=1').expect(200)).body.Resources[0];
  const row = await sql<{
    created: string;
  }>`select created_at::text as created from users where id = ${deep.id}`.execute(harness.database.db);
  const text = await plan('userName pr', { cursorAfter: { value: row.rows[0]!.created, id: deep.id } });
  expect(text).toContain('users_org_created');
  // A range on the index (the keyset), not a walk from the start that filters rows out.
  expect(text).toMatch(/"Index Cond":"[^"]*created_at[^"]*"/);
  expect(outerNodeTypes(text)).not.toContain('Sort');
});

it.each([
  ['User', 'users_org_created', ['deprovisioned_at'], userStorage, userPositionStatement, userPageStatement],
  ['Group', 'groups_org_created', [], groupStorage, groupPositionStatement, groupPageStatement],
] as const)(
  'walks to a deep startIndex of %ss on the creation-order index alone, not through the table',
  async (type, index, covers, storage, positionStatement, pageStatement) => {
    // As autovacuum leaves a table: most of its pages marked all-visible.
    await sql`vacuum analyze users, groups`.execute(harness.database.db);
    const unfiltered: ListQuery = {
      filter: undefined,
      sortKey: compileSortKey(resolveSort(resourceTypes[type], undefined), storage, 'created_at'),
      descending: false,
      page: { kind: 'offset', offset: 3999, limit: 1 },
    };
    const planned = await explain(positionStatement(unfiltered), unfiltered, true);
    const text = JSON.stringify(planned);
    // In order on the creation-order index: an index-only scan once vacuum has marked the table's
    // pages all-visible, which it cannot while another test file's transaction is open here.
    expect(text).toMatch(/"Node Type":"Index (Only )?Scan"/);
    expect(text).toContain(index);
    expect(text).toMatch(/"Actual Rows":4000/);
    expect(text).not.toMatch(/"Node Type":"(Seq Scan|Sort)"/);
    // The index holds every column the walk reads, so that it can be read alone.
    const { rows: definition } = await sql<{ ddl: string }>`
      select pg_get_indexdef(${index}::regclass) as ddl`.execute(harness.database.db);
    for (const column of ['created_at', 'id', ...covers]) expect(definition[0]!.ddl).toContain(column);
    // The walk's row is the page's start: the 4,000th in creation order, as OFFSET reads it.
    const db = harness.database.db;
    const [row] = (await positionStatement(unfiltered).run(db, listValues(t.orgId, unfiltered))).rows;
    const [offset] = (await pageStatement(unfiltered).run(db, listValues(t.orgId, unfiltered))).rows;
    expect(row?.id).toBeDefined();
    expect(row?.id).toBe(offset?.id);
  },
);

it("reads each listed user's groups through the membership index, in the same query", async () => {
  const text = await plan('userName eq "user42@corp.example"');
  const groups = subPlans(text);
  expect(groups).toContain('group_members_org_user');
  expect(groups).not.toMatch(/"Node Type":"Seq Scan"/);
});

it("works out users' groups only for the rows of the page, not for the rows OFFSET skips", async () => {
  const listing = userQuery('userName pr', { kind: 'offset', offset: 4000, limit: 100 });
  const planned = await explain(userPageStatement(listing, true), listing, true);
  const loops: number[] = [];
  const walk = (node: PlanNode & { 'Actual Loops'?: number }) => {
    if (node['Parent Relationship'] === 'SubPlan') loops.push(node['Actual Loops']!);
    for (const child of node.Plans ?? []) walk(child);
  };
  walk(planned[0]!.Plan);
  expect(loops.length).toBeGreaterThan(0);
  for (const n of loops) expect(n).toBeLessThanOrEqual(100);
});

it.each(Object.entries(userWriteStatements))(
  "finds the users of a batch's %s by key, not by reading the organization's users",
  async (_, write) => {
    const { rows } = await sql<{ id: string }>`
    select id from users where org_id = ${t.orgId} order by created_at limit 3`.execute(harness.database.db);
    const bound = write.bind({
      org: t.orgId,
      batch: JSON.stringify(rows.map((u, n) => ({ n, id: u.id, at: new Date().toISOString() }))),
    });
    const result = await harness.database.db.executeQuery<{ 'QUERY PLAN': unknown }>(
      CompiledQuery.raw(`explain (format json) ${bound.sql}`, [...bound.parameters]),
    );
    expect(JSON.stringify(result.rows[0]!['QUERY PLAN'])).toContain('users_pkey');
    expect(seqScanned(result.rows[0]!['QUERY PLAN'])).not.toContain('users');
  },
);

it('answers the seeded lookups over HTTP', async () => {
  const res = await t.get('/Users?filter=userName%20eq%20%22User42@Corp.Example%22').expect(200);
  expect(res.body.totalResults).toBe(1);
  const mail = await t
    .get(`/Users?filter=${encodeURIComponent('emails[type eq "work"].value eq "USER43@corp.example"')}`)
    .expect(200);
  expect(mail.body.Resources.map((u: { userName: string }) => u.userName)).toEqual(['user43@corp.example']);
});

describe('groups', () => {
  let groupId: string;
  let memberId: string;

  beforeAll(async () => {
    const db = harness.database.db;
    const row = await sql<{
      group_id: string;
      user_id: string;
    }>`select group_id, user_id from group_members limit 1`.execute(db);
    groupId = row.rows[0]!.group_id;
    memberId = row.rows[0]!.user_id;
  });

  async function groupPlan(filter: string) {
    const listing: ListQuery = {
      filter: planFilter(resolveFilter(parseFilter(filter), resourceTypes.Group), groupStorage),
      sortKey: compileSortKey(resolveSort(resourceTypes.Group), groupStorage, 'created_at'),
      descending: false,
      page: { kind: 'offset', offset: 0, limit: 100 },
    };
    return JSON.stringify(await explain(groupPageStatement(listing), listing));
  }

  it.each([
    ['displayName eq', () => 'displayName eq "GROUP 42"', 'groups_org_display_name_ci'],
    ['members[value eq]', () => `members[value eq "${memberId}"]`, 'group_members_'],
    [
      'id eq … and members[value eq …]',
      () => `id eq "${groupId}" and members[value eq "${memberId}"]`,
      'groups_pkey',
    ],
  ])('%s uses an index', async (_, filter, index) => {
    const text = await groupPlan(filter());
    expect(text).toMatch(/Index Scan|Bitmap Index Scan|Index Only Scan/);
    expect(text).toContain(index);
    expect(text).not.toMatch(
      /"Node Type":"Seq Scan","Parallel Aware":false,"Async Capable":false,"Relation Name":"groups"/,
    );
  });
});
