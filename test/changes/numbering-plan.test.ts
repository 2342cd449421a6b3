// The plans of the statements scim_number_changes runs on `changes` (its latest text is in
// migrations/schema.sql), taken from the function's own body and explained as PL/pgSQL runs them:
// with the function's settings (enable_bitmapscan, enable_nestloop and jit off), its variables as
// parameters, and both the plan made for the call's values and the generic plan PL/pgSQL may keep
// after five calls. The feed has a long numbered history, whose rows stay in the index of unnumbered
// changes as dead entries until vacuum, and a backlog of changes written since the last numbering.
import { type Kysely, sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { NUMBER_AT_ONCE, numberChanges } from '../../src/changes/changes.repository.js';
import type { DB } from '../../src/db/tables.js';
import { type Harness, type Tenant, useHarness } from '../helpers/harness.js';

let harness: Harness;
let t: Tenant;
/** Users created and numbered: the feed's history. */
const HISTORY = 20_000;
/** Unnumbered changes written so far (user updates since the last numbering). */
let backlog = 0;

useHarness(async (h) => {
  harness = h;
  t = await h.tenant();
  const db = h.database.db;
  await sql`
    insert into users (org_id, id, user_name, external_id, display_name, active, data, created_at, updated_at)
    select ${t.orgId}::uuid, gen_random_uuid(), 'user' || i || '@corp.example', 'ext-' || i, 'User ' || i, true,
           jsonb_build_object('userName', 'user' || i || '@corp.example', 'title', 'Engineer',
             'emails', jsonb_build_array(jsonb_build_object('value', 'user' || i || '@corp.example', 'primary', true))),
           now(), now()
    from generate_series(1, ${HISTORY}) as i`.execute(db);
  // Numbered as the feed numbers them, NUMBER_AT_ONCE at a time.
  while ((await numberChanges(db)).numbered > 0);
});

/** Updates the title of more users, up to `size` unnumbered user.updated changes, and analyzes. */
async function backlogOf(size: number): Promise<void> {
  const db = harness.database.db;
  await sql`
    update users set data = data || '{"title": "Manager"}', updated_at = now()
    where org_id = ${t.orgId}::uuid and user_name in (
      select 'user' || i || '@corp.example' from generate_series(${backlog + 1}::integer, ${size}::integer) as i)`.execute(
    db,
  );
  backlog = size;
  await sql`analyze changes`.execute(db);
  const { rows } = await sql<{ unnumbered: number }>`
    select count(*)::integer as unnumbered from changes where position is null`.execute(db);
  expect(rows[0]!.unnumbered).toBe(size);
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Subplan Name'?: string;
  'Parent Relationship'?: string;
  'CTE Name'?: string;
  Operation?: string;
  Plans?: PlanNode[];
}

/** Every node of a plan, depth first. */
function nodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodes)];
}

/** The nodes of a plan's own tree, leaving out its subplans (the derivation of each change's data). */
function ownNodes(node: PlanNode): PlanNode[] {
  return [
    node,
    ...(node.Plans ?? []).filter((c) => c['Parent Relationship'] !== 'SubPlan').flatMap(ownNodes),
  ];
}

function label(node: PlanNode): string {
  const on = node['Relation Name'] ?? node['CTE Name'];
  return [
    node['Subplan Name'] ? `[${node['Subplan Name']}]` : '',
    node['Node Type'],
    node.Operation && node['Node Type'] === 'ModifyTable' ? node.Operation : '',
    node['Index Name'] ? `using ${node['Index Name']}` : '',
    on ? `on ${on}` : '',
  ]
    .filter(Boolean)
    .join(' ');
}

/** A plan as an indented outline, for failure messages. */
function outline(node: PlanNode, depth = 0): string {
  return [
    `${'  '.repeat(depth)}${label(node)}`,
    ...(node.Plans ?? []).map((c) => outline(c, depth + 1)),
  ].join('\n');
}

/** The scans of `changes` in a plan, as `Node Type using index`. */
function scansOfChanges(plan: PlanNode): string[] {
  return nodes(plan)
    .filter((n) => n['Relation Name'] === 'changes' && n['Node Type'] !== 'ModifyTable')
    .map((n) => `${n['Node Type']}${n['Index Name'] ? ` using ${n['Index Name']}` : ''}`);
}

/**
 * The statements of scim_number_changes's body that read `changes`, with its variables as the
 * parameters PL/pgSQL gives them: the check for anything to number (an IF's condition, run as a
 * SELECT of it), and the numbering of a batch ($1 the last position handed out, $2 the batch size).
 */
async function numberingStatements(db: Kysely<DB>) {
  const { rows } = await sql<{ body: string; config: string[] }>`
    select prosrc as body, proconfig as config from pg_proc
    where proname = 'scim_number_changes' and pronamespace = current_schema()::regnamespace`.execute(db);
  expect(rows).toHaveLength(1);
  const { body, config } = rows[0]!;
  const check = /if (not exists \(select 1 from changes c where c\.position is null\)) then/.exec(body)?.[1];
  const batch = /(with todo as materialized \([\s\S]*?) into numbered, last_position( from done);/.exec(body);
  expect(check, 'the check for changes to number, in scim_number_changes').toBeDefined();
  expect(batch, 'the numbering of a batch, in scim_number_changes').not.toBeNull();
  const parameters = (text: string) =>
    text.replace(/(?<![\w.])start(?!\w)/g, '$1').replace(/(?<![\w.])max_rows(?!\w)/g, '$2');
  return { settings: config, check: `select ${check}`, batch: parameters(batch![1]! + batch![2]!) };
}

type Mode = 'force_custom_plan' | 'force_generic_plan';
const MODES: Mode[] = ['force_custom_plan', 'force_generic_plan'];

/** The plans of the two statements in `mode`, with the function's settings, as it runs them. */
async function plans(mode: Mode): Promise<{ check: PlanNode; batch: PlanNode }> {
  return harness.database.db.transaction().execute(async (trx) => {
    const { settings, check, batch } = await numberingStatements(trx);
    expect(settings).toEqual(expect.arrayContaining(['enable_bitmapscan=off', 'enable_nestloop=off']));
    for (const setting of settings) {
      const [name, value] = setting.split('=') as [string, string];
      await sql`select set_config(${name}, ${value}, true)`.execute(trx);
    }
    await sql`select set_config('plan_cache_mode', ${mode}, true)`.execute(trx);
    const { rows: feed } = await sql<{ last: string }>`
      select last_position::text as last from change_feed`.execute(trx);
    const explain = async (name: string, text: string, types: string, values: string) => {
      await sql.raw(`prepare ${name}${types} as ${text}`).execute(trx);
      const { rows } = await sql<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>`
        explain (format json) execute ${sql.raw(name + values)}`.execute(trx);
      await sql.raw(`deallocate ${name}`).execute(trx);
      return rows[0]!['QUERY PLAN'][0].Plan;
    };
    return {
      check: await explain('numbering_check', check, '', ''),
      batch: await explain(
        'numbering_batch',
        batch,
        '(bigint, integer)',
        `(${feed[0]!.last}, ${NUMBER_AT_ONCE})`,
      ),
    };
  });
}

/** The batch's plan, whatever the size of the backlog. */
function expectBatchPlan(batch: PlanNode, mode: Mode): void {
  const why = `${mode}:\n${outline(batch)}`;
  // Two reads of changes, both through the index of unnumbered changes: one takes the batch, one
  // finds its rows to update. No sequential scan of the whole history, and no bitmap scan (which
  // would visit every heap page of the numbered rows the index still holds).
  expect(scansOfChanges(batch), why).toEqual([
    'Index Scan using changes_unpositioned',
    'Index Scan using changes_unpositioned',
  ]);
  // The batch in write order straight from the index: no sort of the backlog.
  const todo = nodes(batch).find((n) => n['Subplan Name'] === 'CTE todo');
  expect(todo && ownNodes(todo).map((n) => n['Node Type']), why).toEqual([
    'Limit',
    'WindowAgg',
    'Index Scan',
  ]);
  // The batch, derived once, joined to the rows it updates by hash or merge, never by a nested loop
  // over the batch for each row (minutes for 20,000 changes). Postgres 15 hashes in the plan for the
  // values and sorts the batch to merge in the generic plan (which guesses a tenth of the backlog
  // for the unknown batch size); Postgres 17 and later (PGlite) know the batch comes out in seq order
  // and merge without a sort. Either is a single pass over both.
  const done = nodes(batch).find((n) => n['Subplan Name'] === 'CTE done');
  expect(done && label(done), why).toBe('[CTE done] ModifyTable Update on changes');
  const join = done!.Plans![0]!;
  expect(join['Node Type'], why).toMatch(/^(Hash|Merge) Join$/);
  expect(
    ownNodes(join).map((n) => n['Node Type']),
    why,
  ).not.toContain('Nested Loop');
  expect(
    ownNodes(join)
      .filter((n) => n['Node Type'] === 'CTE Scan')
      .map(label),
    why,
  ).toEqual(['CTE Scan on todo']);
}

// A few changes (the usual call, 20 ms after a write) and a backlog smaller than a batch: both
// statements keep to the index of unnumbered changes.
for (const [what, size] of [
  ['a few changes', 20],
  ['a backlog smaller than a batch', 2_000],
] as const) {
  describe(`numbering ${what}`, () => {
    beforeAll(() => backlogOf(size));

    it('checks for changes to number in the index of unnumbered ones', async () => {
      for (const mode of MODES) {
        const { check } = await plans(mode);
        expect(scansOfChanges(check), `${mode}:\n${outline(check)}`).toEqual([
          'Index Only Scan using changes_unpositioned',
        ]);
      }
    });

    it('reads only unnumbered changes, by index, and updates them in one pass', async () => {
      for (const mode of MODES) expectBatchPlan((await plans(mode)).batch, mode);
    });
  });
}

// A backlog of more than a batch and over a third of the table (numbering behind after an outage).
describe('numbering a backlog of more than one batch', () => {
  const size = NUMBER_AT_ONCE + 5_000;
  beforeAll(() => backlogOf(size));

  it('still reads only unnumbered changes, by index, and updates them in one pass', async () => {
    for (const mode of MODES) expectBatchPlan((await plans(mode)).batch, mode);
  });

  // A known weakness, pinned so that it is seen: with unnumbered changes a large part of the table
  // (from about a quarter on Postgres 15, a third on PGlite), the planner expects EXISTS to meet one
  // soon in a sequential scan, but they are the newest rows: the scan reads the whole numbered
  // history first, on every call while the feed catches up. When scim_number_changes checks some
  // other way (enable_seqscan off, or `order by seq limit 1`), expect the index here too.
  it('checks for changes to number with a sequential scan of the whole table', async () => {
    const { rows } = await sql<{ total: number }>`select count(*)::integer as total from changes`.execute(
      harness.database.db,
    );
    expect(size * 100 > rows[0]!.total * 40, 'unnumbered changes are over 40% of the table').toBe(true);
    for (const mode of MODES) {
      const { check } = await plans(mode);
      expect(scansOfChanges(check), `${mode}:\n${outline(check)}`).toEqual(['Seq Scan']);
    }
  });
});
