// The part of a list query every resource type shares: order by the sort key then the id, an offset
// or keyset page, and the total. Each repository supplies its own filtered base query, reading the
// organization from the slot `org`. A list query is compiled once per shape (db/shapes.ts): listShape
// names what its SQL depends on, listValues fills its slots.
import {
  type AliasedRawBuilder,
  type Compilable,
  type CompiledQuery,
  type Kysely,
  type QueryExecutorProvider,
  type SelectQueryBuilder,
  sql,
} from 'kysely';
import { Slot, type SlotValues, shapes, slot } from '../db/shapes.js';
import { KEYSET_SLOTS, keysetAfter, orderBy } from '../filter/sort.js';
import type { ListQuery, ListResult } from './listing.js';

const PAGE_SLOTS = { offset: 'offset', limit: 'limit' } as const;

interface PagedRow {
  id: string;
  sort_value: string | null;
}

/** The order a page is read in: reading backwards runs it in reverse (the caller turns the rows round). */
function readsDescending(query: ListQuery): boolean {
  return query.page.kind === 'keyset' && query.page.backwards ? !query.descending : query.descending;
}

/** Orders and pages the rows of `table`, selecting the sort key as text for cursors. */
export function pageRows<D, TB extends keyof D, O>(
  rows: SelectQueryBuilder<D, TB, O>,
  table: string,
  query: ListQuery,
) {
  const { page, sortKey } = query;
  const descending = readsDescending(query);
  const order = orderBy(descending);
  const id = sql.ref(`${table}.id`);
  let paged = rows
    .select(sql<string | null>`(${sortKey.expr})::text`.as('sort_value'))
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
function listShape(db: QueryExecutorProvider, table: string, query: ListQuery, variant: string): string {
  const { page } = query;
  const paging =
    page.kind === 'offset'
      ? 'offset'
      : page.after === undefined
        ? 'keyset'
        : `keyset after ${page.after.value === null ? 'null' : 'value'}`;
  // The filter's SQL, and the slots in the order it reads them.
  const filter = query.filter?.where.compile(db);
  const slots = filter?.parameters.map((p) => (p instanceof Slot ? p.name : '?')).join(',') ?? '';
  return [table, variant, query.sortKey.name, readsDescending(query), paging, slots, filter?.sql ?? ''].join(
    '\n',
  );
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
 * Postgres returns a subquery's rows.
 */
export function decoratePage<D>(
  db: Kysely<D>,
  // biome-ignore lint/suspicious/noExplicitAny: any paged query of pageRows, whatever it selects.
  paged: SelectQueryBuilder<any, any, any>,
  table: string,
  query: ListQuery,
  columns: readonly AliasedRawBuilder<unknown, string>[],
) {
  const order = orderBy(readsDescending(query));
  // biome-ignore lint/suspicious/noExplicitAny: the page's columns are the caller's to type.
  return (db as Kysely<any>)
    .selectFrom(paged.as(table))
    .selectAll(table)
    .select(columns)
    .orderBy(sql`${sql.ref(`${table}.sort_key`)} ${order.key}`)
    .orderBy(sql`${sql.ref(`${table}.id`)} ${order.id}`);
}

/**
 * A list query of `table` for the organization `orgId`, compiled once per shape: `build` runs only for
 * a shape not seen before. `variant` tells apart the queries a repository builds from one ListQuery.
 */
export function compiledList<R>(
  db: QueryExecutorProvider,
  table: string,
  orgId: string,
  query: ListQuery,
  variant: string,
  build: () => Compilable<R>,
): CompiledQuery<R> {
  return shapes.compile(listShape(db, table, query, variant), listValues(orgId, query), build);
}

/** Runs the count and the page together and shapes the result. */
export async function collectPage<R extends PagedRow, T>(
  query: ListQuery,
  total: () => Promise<{ total: string | number | bigint }>,
  rows: () => Promise<R[]>,
  toItem: (row: R) => T,
): Promise<ListResult<T>> {
  const { page } = query;
  if (page.limit === 0) return { items: [], total: Number((await total()).total), more: false };
  const fromStart = page.kind === 'offset' ? page.offset === 0 : page.after === undefined;
  let found: R[];
  let count: number;
  if (fromStart) {
    // A page that starts at the beginning and ends before its limit is the whole result: its length
    // is the total, and the count query is skipped (an IdP's userName lookup is exactly this).
    found = await rows();
    count = found.length < page.limit ? found.length : Number((await total()).total);
  } else {
    const [counted, rowsFound] = await Promise.all([total(), rows()]);
    found = rowsFound;
    count = Number(counted.total);
  }
  const more = page.kind === 'keyset' && found.length > page.limit;
  const kept = more ? found.slice(0, page.limit) : found;
  if (page.kind === 'keyset' && page.backwards) kept.reverse();
  return {
    items: kept.map((row) => ({ item: toItem(row), id: row.id, sortValue: row.sort_value })),
    total: count,
    more,
  };
}
