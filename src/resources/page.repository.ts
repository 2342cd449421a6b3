// The part of a list query every resource type shares: order by the sort key then the id, an offset
// or keyset page, and the total. Each repository supplies its own filtered base query, reading the
// organization from the slot `org`. A list query is compiled once per shape (db/shapes.ts): listShape
// names what its SQL depends on, listValues fills its slots.
import {
  type AliasedRawBuilder,
  type Compilable,
  type CompiledQuery,
  type Kysely,
  type SelectQueryBuilder,
  sql,
} from 'kysely';
import { type SlotValues, shapes, slot } from '../db/shapes.js';
import { KEYSET_SLOTS, keysetAfter, orderBy } from '../filter/sort.js';
import type { ListQuery, ListResult } from './listing.js';

const PAGE_SLOTS = { offset: 'offset', limit: 'limit' } as const;

interface PagedRow {
  id: string;
  /** The sort key as text, for a cursor page's cursors; an index page does not select it. */
  sort_value?: string | null;
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
    page.kind === 'keyset' ? rows.select(sql<string | null>`(${sortKey.expr})::text`.as('sort_value')) : rows
  )
    .select(sql`${sortKey.expr}`.as('sort_key'))
    .orderBy(sql`${sortKey.expr} ${order.key}`)
    .orderBy(sql`${id} ${order.id}`);
  const limit = slot<number>(PAGE_SLOTS.limit);
  if (page.kind === 'offset') return paged.offset(slot<number>(PAGE_SLOTS.offset)).limit(limit);
  if (page.after) paged = paged.where(keysetAfter(sortKey, id, descending, page.after.value === null));
  return paged.limit(limit);
}

/**
 * The shape of a list query of `table` (db/shapes.ts): everything its SQL depends on except the
 * values in its slots. `variant` tells apart the queries a repository builds from one ListQuery.
 */
function listShape(table: string, query: ListQuery, variant: string): string {
  const { page } = query;
  const paging =
    page.kind === 'offset'
      ? 'offset'
      : page.after === undefined
        ? 'keyset'
        : `keyset after ${page.after.value === null ? 'null' : 'value'}`;
  const filter = query.filter?.shape ?? '';
  return [table, variant, query.sortKey.name, readsDescending(query), paging, filter].join('\n');
}

/** The values of a list query's slots: the organization's id, the filter's values and the page's. */
function listValues(orgId: string, query: ListQuery): SlotValues {
  const { page } = query;
  return {
    org: orgId,
    ...query.filter?.values,
    // A keyset page reads one row more than it shows, to tell whether there is more.
    [PAGE_SLOTS.limit]: page.kind === 'offset' ? page.limit : page.limit + 1,
    ...(page.kind === 'offset' ? { [PAGE_SLOTS.offset]: page.offset } : {}),
    ...(page.kind === 'keyset' && page.after
      ? { [KEYSET_SLOTS.value]: page.after.value, [KEYSET_SLOTS.id]: page.after.id }
      : {}),
  };
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
      [...kept, ...(query.page.kind === 'keyset' ? ['sort_value'] : [])].map(
        (column) => `${table}.${column}`,
      ),
    )
    .select(columns)
    .orderBy(sql`${sql.ref(`${table}.sort_key`)} ${order.key}`)
    .orderBy(sql`${sql.ref(`${table}.id`)} ${order.id}`);
}

/**
 * A list query of `table` for the organization `orgId`, compiled once per shape: `build` runs only for
 * a shape not seen before. `variant` tells apart the queries a repository builds from one ListQuery.
 */
export function compiledList<R>(
  table: string,
  orgId: string,
  query: ListQuery,
  variant: string,
  build: () => Compilable<R>,
): CompiledQuery<R> {
  return shapes.compile(listShape(table, query, variant), listValues(orgId, query), build);
}

/** Runs the count and the page (each compiled by compiledList) together and shapes the result. */
export async function collectPage<D, R extends PagedRow, T>(
  db: Kysely<D>,
  query: ListQuery,
  countQuery: () => CompiledQuery<{ total: string | number | bigint }>,
  pageQuery: () => CompiledQuery<R>,
  toItem: (row: R) => T,
): Promise<ListResult<T>> {
  const total = async () => Number((await db.executeQuery(countQuery())).rows[0]!.total);
  const rows = async () => (await db.executeQuery(pageQuery())).rows;
  const { page } = query;
  if (page.limit === 0) return { items: [], total: await total(), more: false };
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
  const more = page.kind === 'keyset' && found.length > page.limit;
  const kept = more ? found.slice(0, page.limit) : found;
  if (page.kind === 'keyset' && page.backwards) kept.reverse();
  return {
    items: kept.map((row) => ({ item: toItem(row), id: row.id, sortValue: row.sort_value ?? null })),
    total: count,
    more,
  };
}
