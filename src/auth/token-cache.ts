// A short-lived, process-local memory of successful token checks, so a SCIM request does not pay a
// database round trip to authenticate. DESIGN.md allows it on one condition: nothing process-local
// decides an answer for long. So an entry lives TOKEN_CACHE_TTL_MS at most; expiry is checked on
// every request; and every admin change to an organization or its tokens drops the organization's
// entries at once, in this process directly and in the others through Postgres NOTIFY
// (auth-changes.ts).

/** How long a successful check is trusted without asking the database again. */
export const TOKEN_CACHE_TTL_MS = 5_000;
const MAX_ENTRIES = 10_000;

interface Entry<T> {
  readonly orgId: string;
  readonly value: T;
  readonly until: number;
}

export class TokenCache<T> {
  readonly #entries = new Map<string, Entry<T>>();
  #generation = 0;

  constructor(private readonly ttlMs: number = TOKEN_CACHE_TTL_MS) {}

  /** `key` must identify the whole credential (a hash of the secret), never only its prefix. */
  get(orgId: string, key: string, nowMs: number): T | undefined {
    const id = cacheKey(orgId, key);
    const entry = this.#entries.get(id);
    if (!entry) return undefined;
    if (entry.until <= nowMs) {
      this.#entries.delete(id);
      return undefined;
    }
    return entry.value;
  }

  /**
   * Take it before reading a token from the database and hand it to `set`: a check read before an
   * invalidation that lands while the read is in flight must not be remembered after it.
   */
  get generation(): number {
    return this.#generation;
  }

  set(orgId: string, key: string, value: T, nowMs: number, readAt: number): void {
    if (this.ttlMs <= 0 || readAt !== this.#generation) return;
    // Tokens in use are few; a flood of distinct valid tokens only ever costs the oldest entry.
    if (this.#entries.size >= MAX_ENTRIES) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    this.#entries.set(cacheKey(orgId, key), { orgId, value, until: nowMs + this.ttlMs });
  }

  /** Forgets every check of an organization's tokens: its settings or one of its tokens changed. */
  invalidateOrg(orgId: string): void {
    this.#generation++;
    for (const [key, entry] of this.#entries) if (entry.orgId === orgId) this.#entries.delete(key);
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
