// Where the pages of an index-paged list start, remembered while they cannot have moved. Okta imports
// with startIndex 1, 101, 201, …: each page then continues by keyset from the row the previous one
// ended on, instead of OFFSET walking every row before it. Only lists in creation order without a
// filter are remembered, and only under the version of the organization's count they were read at:
// a create or a removal (which changes the version) is the only thing that moves their rows.
import { LRUCache } from 'lru-cache';
import type { CursorPosition } from './cursor.js';

interface Known {
  readonly version: string;
  readonly position: CursorPosition;
}

export class PagePositions {
  readonly #known = new LRUCache<string, Known>({ max: 10_000 });

  /** The row just before row `offset` (0-based) of `table`'s list in `orgId`, if known at `version`. */
  find(table: string, orgId: string, version: string, offset: number): CursorPosition | undefined {
    const known = this.#known.get(`${table} ${orgId} ${offset}`);
    return known?.version === version ? known.position : undefined;
  }

  /** Remembers that the row just before row `offset` is at `position`, at `version`. */
  remember(table: string, orgId: string, version: string, offset: number, position: CursorPosition): void {
    this.#known.set(`${table} ${orgId} ${offset}`, { version, position });
  }
}
