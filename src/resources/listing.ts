// What a repository's list query takes and gives, whatever the resource type.
import type { CompiledFilter } from '../filter/compile.js';
import type { SortKey } from '../filter/sort.js';
import type { CursorPosition } from './cursor.js';

export type PageRequest =
  | { readonly kind: 'offset'; readonly offset: number; readonly limit: number }
  /** Rows after `after` (before it when `backwards`) in the query's order; from the start when absent. */
  | {
      readonly kind: 'keyset';
      readonly after: CursorPosition | undefined;
      readonly backwards: boolean;
      readonly limit: number;
    };

export interface ListQuery {
  /** The filter's condition and the values in its slots; undefined lists everything. */
  readonly filter: CompiledFilter | undefined;
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
