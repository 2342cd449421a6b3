// A short-lived, process-local memory of successful token checks, so a SCIM request does not pay a
// database round trip to authenticate. It is allowed on one condition: nothing process-local
// decides an answer for long. So an entry lives TOKEN_CACHE_TTL_MS at most; expiry is checked on
// every request; and every admin change to an organization or its tokens drops the organization's
// entries at once, in this process directly and in the others through Postgres NOTIFY
// (auth-changes.ts).
import { LRUCache } from 'lru-cache';

/** How long a successful check is trusted without asking the database again. */
export const TOKEN_CACHE_TTL_MS = 5_000;
/** Tokens in use are few; a flood of distinct valid tokens only ever costs the least recent entry. */
const MAX_ENTRIES = 10_000;

interface Entry<T> {
  readonly orgId: string;
  readonly value: T;
}

export class TokenCache<T> {
  readonly #entries: LRUCache<string, Entry<T>>;
  #generation = 0;

  /** `clock` tells the time entries expire by (tests give one of their own). */
  constructor(
    private readonly ttlMs: number = TOKEN_CACHE_TTL_MS,
    clock: { now(): number } = performance,
  ) {
    this.#entries = new LRUCache({
      max: MAX_ENTRIES,
      ttl: Math.max(1, ttlMs),
      ttlResolution: 0,
      perf: clock,
    });
  }

  /** `key` must identify the whole credential (a hash of the secret), never only its prefix. */
  get(orgId: string, key: string): T | undefined {
    return this.#entries.get(cacheKey(orgId, key))?.value;
  }

  /**
   * Take it before reading a token from the database and hand it to `set`: a check read before an
   * invalidation that lands while the read is in flight must not be remembered after it.
   */
  get generation(): number {
    return this.#generation;
  }

  set(orgId: string, key: string, value: T, readAt: number): void {
    if (this.ttlMs <= 0 || readAt !== this.#generation) return;
    this.#entries.set(cacheKey(orgId, key), { orgId, value });
  }

  /** Forgets every check of an organization's tokens: its settings or one of its tokens changed. */
  invalidateOrg(orgId: string): void {
    this.#generation++;
    for (const [key, entry] of this.#entries.entries()) if (entry.orgId === orgId) this.#entries.delete(key);
  }

  clear(): void {
    this.#generation++;
    this.#entries.clear();
  }

  get size(): number {
    return this.#entries.size;
  }
}

const cacheKey = (orgId: string, key: string) => `${orgId}\u0000${key}`;
