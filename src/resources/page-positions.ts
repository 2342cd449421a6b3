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
  /** OFFSET walks under way, by where they go: a request for the same page waits for the walk. */
  readonly #walks = new Map<string, Promise<unknown>>();

  /** The row just before row `offset` (0-based) of `table`'s list in `orgId`, if known at `version`. */
  find(table: string, orgId: string, version: string, offset: number): CursorPosition | undefined {
    const known = this.#known.get(`${table} ${orgId} ${offset}`);
    return known?.version === version ? known.position : undefined;
  }

  /** Remembers that the row just before row `offset` is at `position`, at `version`. */
  remember(table: string, orgId: string, version: string, offset: number, position: CursorPosition): void {
    this.#known.set(`${table} ${orgId} ${offset}`, { version, position });
  }

  /**
   * The row just before row `offset`, at `version`: known, or found by a walk to it already under
   * way (waited for), or undefined.
   */
  async findOrAwait(
    table: string,
    orgId: string,
    version: string,
    offset: number,
  ): Promise<CursorPosition | undefined> {
    const walk = this.#walks.get(`${table} ${orgId} ${version} ${offset}`);
    if (walk) await walk.catch(() => undefined);
    return this.find(table, orgId, version, offset);
  }

  /** Runs an OFFSET walk to row `offset`, so that requests for the same page wait for it (findOrAwait). */
  async walk<T>(
    table: string,
    orgId: string,
    version: string,
    offset: number,
    run: () => Promise<T>,
  ): Promise<T> {
    const key = `${table} ${orgId} ${version} ${offset}`;
    const walk = run();
    this.#walks.set(key, walk);
    try {
      return await walk;
    } finally {
      if (this.#walks.get(key) === walk) this.#walks.delete(key);
    }
  }
}
