// The list query every resource type shares: a filter (planned onto the table), an order by the
// sort key then the id, an index (OFFSET) or cursor (keyset) page, and the total. Each repository
// gives its filtered base query; the statement is built once per key (listKey), which one function
// derives from what the SQL is built from, and run with the organization's, the filter's and the
// page's values.
import { type AliasedRawBuilder, type Compilable, type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import { param, type Statement, StatementCache } from '../db/statement.js';
import type { DB } from '../db/tables.js';
import { filterValues } from '../filter/compile.js';
import { conditionKey, type FilterPlan } from '../filter/plan.js';
import { KEYSET_PARAMETERS, keysetAfter, orderBy, type SortKey } from '../filter/sort.js';
import type { CursorPosition } from './cursor.js';
import type { PagePositions } from './page-positions.js';

type PageRequest =
  | {
      readonly kind: 'offset';
      readonly offset: number;
      readonly limit: number;
    }
  /** Rows after `after` (before it when `backwards`) in the query's order; from the start when absent. */
  | {
      readonly kind: 'keyset';
      readonly after: CursorPosition | undefined;
      readonly backwards: boolean;
      readonly limit: number;
    };

export interface ListQuery {
  /** The filter laid onto the table; undefined lists everything. */
  readonly filter: FilterPlan | undefined;
  readonly sortKey: SortKey;
  readonly descending: boolean;
  readonly page: PageRequest;
}

export interface Listed<T> {
  readonly item: T;
  readonly id: string;
  /** The row's sort key as text (null when it has none), on a cursor page, whose cursors carry it. */
  readonly sortValue: string | null;
}

export interface ListResult<T> {
  /** In display order. */
  readonly items: Listed<T>[];
  readonly total: number;
  /** keyset: whether more rows lie beyond the page in the direction read. */
  readonly more: boolean;
}

/**
 * Pairs each item of a page with related rows read for the whole page in one query (a user's
 * groups, a group's members), or with undefined when the response does not carry them.
 */
export async function withRelated<T, R>(
  page: ListResult<T>,
  load: ((ids: string[]) => Promise<Map<string, R>>) | undefined,
): Promise<ListResult<{ item: T; related: R | undefined }>> {
  const related = load ? await load(page.items.map((i) => i.id)) : undefined;
  return {
    ...page,
    items: page.items.map((i) => ({ ...i, item: { item: i.item, related: related?.get(i.id) } })),
  };
}

interface PagedRow {
  id: string;
  /** The sort key as text, for a cursor page's cursors; an index page does not select it. */
  sort_value?: string | null;
}

/** Whether a page selects each row's sort key as text: a cursor page does, for its cursors. */
function selectsSortValue(page: PageRequest): boolean {
  return page.kind === 'keyset';
}

/** The order a page is read in: reading backwards runs it in reverse (the caller turns the rows round). */
function readsDescending(query: ListQuery): boolean {
  return query.page.kind === 'keyset' && query.page.backwards ? !query.descending : query.descending;
}

/**
 * Orders and pages the rows of `table`. A cursor page also selects the sort key as text, for its
 * cursors; an index page does not (turning a timestamp into text is Postgres work an IdP's lookup
 * would pay for nothing).
 */
export function pageRows<D, TB extends keyof D, O>(
  rows: SelectQueryBuilder<D, TB, O>,
  table: string,
  query: ListQuery,
) {
  const { page, sortKey } = query;
  const descending = readsDescending(query);
  const order = orderBy(descending);
  const id = sql.ref(`${table}.id`);
  let paged = (
    selectsSortValue(page) ? rows.select(sql<string | null>`(${sortKey.expr})::text`.as('sort_value')) : rows
  )
    .select(sql`${sortKey.expr}`.as('sort_key'))
    .orderBy(sql`${sortKey.expr} ${order.key}`)
    .orderBy(sql`${id} ${order.id}`);
  // The limit is part of the text, not a parameter: Postgres plans a LIMIT it cannot see as a tenth
  // of the table, and would plan each page again rather than keep a plan that costly.
  const limit = sql.lit(rowsRead(page));
  if (page.kind === 'offset') return paged.offset(param<number>('offset')).limit(limit);
  if (page.after) paged = paged.where(keysetAfter(sortKey, id, descending, page.after.value === null));
  return paged.limit(limit);
}

/**
 * Adds columns worked out per row of a page, such as a user's groups, once the page is cut: in the
 * page query itself Postgres would compute them for every row that OFFSET skips or a sort reads.
 * The page is read again in its own order (its sort key, then id), so nothing depends on how
 * Postgres returns a subquery's rows. It returns the page's `kept` columns and (on a cursor page)
 * `sort_value`, not the columns only the decorations or the order read (each column returned is
 * parsed for every row).
 */
export function decoratePage<D>(
  db: Kysely<D>,
  // biome-ignore lint/suspicious/noExplicitAny: any paged query of pageRows, whatever it selects.
  paged: SelectQueryBuilder<any, any, any>,
  table: string,
  query: ListQuery,
  kept: readonly string[],
  columns: readonly AliasedRawBuilder<unknown, string>[],
) {
  const order = orderBy(readsDescending(query));
  // biome-ignore lint/suspicious/noExplicitAny: the page's columns are the caller's to type.
  return (db as Kysely<any>)
    .selectFrom(paged.as(table))
    .select(
      [...kept, ...(selectsSortValue(query.page) ? ['sort_value'] : [])].map(
        (column) => `${table}.${column}`,
      ),
    )
    .select(columns)
    .orderBy(sql`${sql.ref(`${table}.sort_key`)} ${order.key}`)
    .orderBy(sql`${sql.ref(`${table}.id`)} ${order.id}`);
}

/** The row an index page's walk reaches: its sort key as text and its id. */
export interface PositionRow {
  sort_value: string | null;
  id: string;
}

/**
 * The row at the offset of `query`'s page (of one row), read for its sort key and id alone, so that
 * Postgres can walk to it on the order's index without reading the table. The key becomes text after
 * the walk: inside it, Postgres would turn every row it skips into text.
 */
export function positionAt<D>(
  db: Kysely<D>,
  // biome-ignore lint/suspicious/noExplicitAny: any filtered base query of a repository.
  rows: SelectQueryBuilder<any, any, any>,
  table: string,
  query: ListQuery,
) {
  const walked = pageRows(rows.select(sql.ref(`${table}.id`).as('id')), table, query);
  // biome-ignore lint/suspicious/noExplicitAny: the row is PositionRow.
  return (db as Kysely<any>)
    .selectFrom(walked.as('walked'))
    .select([sql<string | null>`(walked.sort_key)::text`.as('sort_value'), 'walked.id']);
}

/** The rows a page reads: a keyset page reads one more than it shows, to tell whether there is more. */
const rowsRead = (page: PageRequest) => (page.kind === 'offset' ? page.limit : page.limit + 1);

const statements = new StatementCache();

/**
 * The key of a list statement: everything its SQL is built from (the table, which of a repository's
 * queries, the order, the paging and the filter's planned condition), none of its values.
 */
function listKey(table: string, variant: string, query: ListQuery): string {
  const { page } = query;
  const paging =
    page.kind === 'offset'
      ? 'offset'
      : page.after === undefined
        ? 'keyset'
        : `keyset after ${page.after.value === null ? 'null' : 'value'}`;
  const filter = query.filter ? conditionKey(query.filter.condition) : '';
  return [table, variant, query.sortKey.name, readsDescending(query), paging, rowsRead(page), filter].join(
    '\n',
  );
}

/** A list statement of `table`, built by `build` the first time its key is seen. */
export function listStatement<R>(
  table: string,
  variant: string,
  query: ListQuery,
  build: (db: Kysely<DB>) => Compilable<R>,
): Statement<R> {
  return statements.get(listKey(table, variant, query), build);
}

/** The values of a list statement: the organization's id (`org`), the filter's and the page's. */
export function listValues(orgId: string, query: ListQuery): Record<string, unknown> {
  const { page } = query;
  return {
    org: orgId,
    ...(query.filter ? filterValues(query.filter) : {}),
    ...(page.kind === 'offset' ? { offset: page.offset } : {}),
    ...(page.kind === 'keyset' && page.after
      ? { [KEYSET_PARAMETERS.value]: page.after.value, [KEYSET_PARAMETERS.id]: page.after.id }
      : {}),
  };
}

/** The statements and shaping of one resource type's list. */
export interface PageSource<R extends PagedRow, T> {
  readonly table: string;
  /** The total of the query; without a filter also the count's version (counts.repository.ts). */
  readonly count: () => Statement<{ total: string | number | bigint; version?: string | number | bigint }>;
  readonly page: (query: ListQuery) => Statement<R>;
  readonly toItem: (row: R) => T;
  /** Where index pages start (Positioning); without it, each page is read by OFFSET. */
  readonly positioning?: Positioning | undefined;
}

/** How a list finds where an index page starts. */
interface Positioning {
  /** Where pages started and ended, remembered by this process (page-positions.ts). */
  readonly positions: PagePositions;
  /** The row at the offset of a page of one row (positionAt), for walks to where a page starts. */
  readonly positionAt: (query: ListQuery) => Statement<PositionRow>;
}

/** Runs the count and the page and shapes the result. */
export async function collectPage<R extends PagedRow, T>(
  db: Kysely<DB>,
  orgId: string,
  query: ListQuery,
  source: PageSource<R, T>,
): Promise<ListResult<T>> {
  const values = listValues(orgId, query);
  const total = async () => Number((await source.count().run(db, values)).rows[0]!.total);
  const rows = async () => (await source.page(query).run(db, values)).rows;
  const { page } = query;
  if (page.limit === 0) return { items: [], total: await total(), more: false };
  if (page.kind === 'offset' && !query.filter && query.sortKey.notNull && source.positioning) {
    return shape(query, source, await positionedPage(db, orgId, query, page, source, source.positioning));
  }
  const fromStart = page.kind === 'offset' ? page.offset === 0 : page.after === undefined;
  let found: R[];
  let count: number;
  if (fromStart) {
    // A page that starts at the beginning and ends before its limit is the whole result: its length
    // is the total, and the count query is skipped (an IdP's userName lookup is exactly this).
    found = await rows();
    count = found.length < page.limit ? found.length : await total();
  } else {
    [count, found] = await Promise.all([total(), rows()]);
  }
  return shape(query, source, { found, count });
}

function shape<R extends PagedRow, T>(
  query: ListQuery,
  source: PageSource<R, T>,
  { found, count }: { found: R[]; count: number },
): ListResult<T> {
  const { page } = query;
  const more = page.kind === 'keyset' && found.length > page.limit;
  const kept = more ? found.slice(0, page.limit) : found;
  if (page.kind === 'keyset' && page.backwards) kept.reverse();
  return {
    items: kept.map((row) => ({ item: source.toItem(row), id: row.id, sortValue: row.sort_value ?? null })),
    total: count,
    more,
  };
}

/**
 * An index page of a list in creation order without a filter: a keyset page from where a page earlier
 * ended when that is known at the count's version, else from the row before the page's start, found
 * by a walk on the order's index (positionAt) and remembered, as is where the next page starts.
 */
async function positionedPage<R extends PagedRow, T>(
  db: Kysely<DB>,
  orgId: string,
  query: ListQuery,
  page: Extract<PageRequest, { kind: 'offset' }>,
  source: PageSource<R, T>,
  { positions, positionAt }: Positioning,
): Promise<{ found: R[]; count: number }> {
  const counted = (await source.count().run(db, listValues(orgId, query))).rows[0]!;
  const count = Number(counted.total);
  const version = String(counted.version);
  /** The page, with where the next one starts remembered (a keyset page selects its rows' keys). */
  const remembered = (found: R[]) => {
    const last = found.at(-1);
    if (last?.sort_value !== undefined) {
      const next = { value: last.sort_value, id: last.id };
      positions.remember(source.table, orgId, version, page.offset + found.length, next);
    }
    return { found, count };
  };
  const pageAfter = async (after: CursorPosition | undefined) => {
    const read = { ...query, page: { kind: 'keyset', after, backwards: false, limit: page.limit } } as const;
    // A keyset page reads one row more than it shows.
    return (await source.page(read).run(db, listValues(orgId, read))).rows.slice(0, page.limit);
  };
  // Postgres plans an OFFSET it cannot see on every call: the first page and a page whose start is
  // known are keyset pages, and a walk reads keys alone.
  if (page.offset === 0) return remembered(await pageAfter(undefined));
  const known = await positions.findOrAwait(source.table, orgId, version, page.offset);
  if (known) return remembered(await pageAfter(known));
  // Requests for the same page meanwhile wait for this walk and continue from where it ends.
  const found = await positions.walk(source.table, orgId, version, page.offset, async () => {
    const before = { ...query, page: { kind: 'offset', offset: page.offset - 1, limit: 1 } } as const;
    const start = (await positionAt(before).run(db, listValues(orgId, before))).rows[0];
    if (!start) return [];
    const position = { value: start.sort_value, id: start.id };
    positions.remember(source.table, orgId, version, page.offset, position);
    return pageAfter(position);
  });
  return remembered(found);
}
