// One list/search for every resource type: parse → resolve → compile the filter, resolve the sort,
// then an index page (RFC 7644 §3.4.2.4) or a cursor page (RFC 9865), rendered as a ListResponse.

import { isStatementTimeout } from '../db/failures.js';
import { parseFilter } from '../filter/parse.js';
import { planFilter } from '../filter/plan.js';
import { referencedAttributes, resolveFilter } from '../filter/resolve.js';
import { compileSortKey, resolveSort } from '../filter/sort.js';
import type { StorageMapping } from '../filter/storage.js';
import { ForbiddenError, InvalidFilterError, InvalidValueError, TooManyError } from '../http/scim-errors.js';
import type { OrgContext } from '../orgs/org-context.js';
import type { AttributeDef, ResourceTypeDef } from '../schema/types.js';
import { type Cursor, decodeCursor, encodeCursor, queryFingerprint } from './cursor.js';
import type { ListParams } from './list-params.js';
import type { Listed, ListQuery, ListResult } from './list-query.js';
import { listResponseJson } from './list-response.js';
import { type ProjectionParams, projector, returnsStoredWhole } from './projection.js';
import type { ScimResource } from './validate.js';

export interface Searchable<T> {
  readonly type: ResourceTypeDef;
  /**
   * Attributes the caller may not see, so may not filter or sort on either (403): User.groups for a
   * token without the groups scope.
   */
  readonly hidden?: ReadonlySet<AttributeDef>;
  readonly storage: StorageMapping;
  /** The column that holds creation time: the default order. */
  readonly createdColumn: string;
  fetch(query: ListQuery): Promise<ListResult<T>>;
  render(item: T): ScimResource;
  /**
   * The item as JSON text, for a response that returns stored resources whole
   * (projection.ts returnsStoredWhole); undefined when the item was not read as text.
   */
  renderWhole?(item: T): string | undefined;
}

interface SearchPlan {
  readonly filter: ListQuery['filter'];
  readonly sort: ReturnType<typeof resolveSort>;
  readonly sortKey: ListQuery['sortKey'];
}

/** The filter and order of a search, compiled for one resource type. */
function planSearch<T>(source: Searchable<T>, params: ListParams): SearchPlan {
  // An empty `filter=` is refused by parseFilter rather than read as "everything".
  const resolved =
    params.filter !== undefined ? resolveFilter(parseFilter(params.filter), source.type) : undefined;
  const sort = resolveSort(source.type, params.sortBy, params.sortOrder);
  if (source.hidden && source.hidden.size > 0) {
    const named = resolved ? referencedAttributes(resolved) : new Set<AttributeDef>();
    if (sort.target) named.add(sort.target.attribute);
    for (const attr of named) {
      if (source.hidden.has(attr)) throw new ForbiddenError(`This token may not read ${attr.name}`);
    }
  }
  const filter = resolved ? planFilter(resolved, source.storage) : undefined;
  return { filter, sort, sortKey: compileSortKey(sort, source.storage, source.createdColumn) };
}

/**
 * One page from the database. RFC 7644 §3.4.2.2 names the answer to a search the server will not
 * finish: 400 tooMany.
 */
async function fetchPage<T>(source: Searchable<T>, query: ListQuery): Promise<ListResult<T>> {
  try {
    return await source.fetch(query);
  } catch (error) {
    if (isStatementTimeout(error)) {
      throw new TooManyError(
        'The search ran past the database time limit; narrow the filter, or page with a smaller count',
      );
    }
    throw error;
  }
}

/** Each item of a page as JSON text, as the projection asks. */
function renderer<T>(source: Searchable<T>, projection: ProjectionParams): (item: T) => string {
  const projectOne = projector(source.type, projection);
  const projected = (item: T) => JSON.stringify(projectOne(source.render(item)));
  const { renderWhole } = source;
  if (!renderWhole || !returnsStoredWhole(source.type, projection)) return projected;
  return (item) => renderWhole(item) ?? projected(item);
}

/** A ListResponse as JSON text (list-response.ts). */
export async function search<T>(
  source: Searchable<T>,
  org: OrgContext,
  params: ListParams,
  now = new Date(),
): Promise<string> {
  const { filter, sort, sortKey } = planSearch(source, params);
  const render = renderer(source, params.projection);
  const project = (listed: Listed<T>[]) => listed.map((l) => render(l.item));
  const paging = params.paging;

  if (paging.kind === 'index') {
    const result = await fetchPage(source, {
      filter,
      sortKey,
      descending: sort.descending,
      page: { kind: 'offset', offset: paging.startIndex - 1, limit: paging.count },
    });
    const resources = project(result.items);
    return listResponseJson(
      { totalResults: result.total, startIndex: paging.startIndex, itemsPerPage: resources.length },
      resources,
    );
  }

  const fingerprint = queryFingerprint([source.type.id, params.filter, sort.key]);
  const cursor: Cursor | undefined =
    paging.cursor === ''
      ? undefined
      : decodeCursor(paging.cursor, fingerprint, paging.count, org.cursorKey, now);
  const backwards = cursor?.direction === 'previous';
  const result = await fetchPage(source, {
    filter,
    sortKey,
    descending: sort.descending,
    page: { kind: 'keyset', after: cursor?.position, backwards, limit: paging.count },
  });
  const items = result.items;
  const first = items[0];
  const last = items[items.length - 1];
  // Reading forwards, more rows ahead means a next page; having started from a cursor means a
  // previous one. Reading backwards it is the other way round.
  const hasNext = backwards ? true : result.more;
  const hasPrevious = backwards ? result.more : cursor !== undefined;
  const encode = (direction: Cursor['direction'], row: Listed<T>) =>
    encodeCursor(
      { direction, position: { value: row.sortValue, id: row.id } },
      fingerprint,
      paging.count,
      org.cursorKey,
      now,
    );
  return listResponseJson(
    {
      totalResults: result.total,
      itemsPerPage: items.length,
      ...(hasNext && last ? { nextCursor: encode('next', last) } : {}),
      ...(hasPrevious && first ? { previousCursor: encode('previous', first) } : {}),
    },
    project(items),
  );
}

/**
 * POST /.search at the base URL (RFC 7644 §3.4.3): every resource type in turn, index-paged across
 * them as one list. A filter or sortBy that names nothing in a type selects nothing from it; one that
 * fits no type at all is the error it is.
 */
export async function searchAcross(
  sources: readonly Searchable<unknown>[],
  params: ListParams,
): Promise<string> {
  const paging = params.paging;
  if (paging.kind !== 'index') {
    throw new InvalidValueError('Cursor paging is per resource type: use /Users/.search or /Groups/.search');
  }
  const planned: { source: Searchable<unknown>; query: SearchPlan }[] = [];
  let firstError: unknown;
  for (const source of sources) {
    try {
      planned.push({ source, query: planSearch(source, params) });
    } catch (error) {
      if (!(error instanceof InvalidFilterError || error instanceof InvalidValueError)) throw error;
      firstError ??= error;
    }
  }
  if (planned.length === 0) throw firstError;
  let skip = paging.startIndex - 1;
  let total = 0;
  const resources: string[] = [];
  for (const { source, query } of planned) {
    const limit = paging.count - resources.length;
    const result = await fetchPage(source, {
      filter: query.filter,
      sortKey: query.sortKey,
      descending: query.sort.descending,
      page: { kind: 'offset', offset: skip, limit },
    });
    total += result.total;
    skip = Math.max(0, skip - result.total);
    const render = renderer(source, params.projection);
    for (const l of result.items) resources.push(render(l.item));
  }
  return listResponseJson(
    { totalResults: total, startIndex: paging.startIndex, itemsPerPage: resources.length },
    resources,
  );
}
