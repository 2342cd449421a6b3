// How long the feed client waits before trying a request again: what the server's Retry-After says,
// or an exponential backoff with jitter.

export interface Backoff {
  /** The first retry's wait, at most (500 ms unless given). */
  readonly initialMs?: number;
  /** The longest wait (30 s unless given). */
  readonly maxMs?: number;
}

const INITIAL_MS = 500;
const MAX_MS = 30_000;
/** A Retry-After further off than this is taken as this: a misconfigured proxy must not park a follower for a day. */
const MAX_RETRY_AFTER_MS = 60 * 60 * 1000;

/**
 * The wait before retry `attempt` (1, 2, …): a ceiling doubling from `initialMs` up to `maxMs`, of
 * which the upper half is drawn at random, so that followers that failed together come back apart.
 */
export function backoffDelay(
  attempt: number,
  backoff: Backoff = {},
  random: () => number = Math.random,
): number {
  const initial = backoff.initialMs ?? INITIAL_MS;
  const ceiling = Math.min(backoff.maxMs ?? MAX_MS, initial * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/**
 * Retry-After (RFC 9110 §10.2.3) as milliseconds from `now`: delay-seconds or an HTTP-date; undefined
 * when absent or unreadable.
 */
export function retryAfterMs(value: string | null, now: number): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, MAX_RETRY_AFTER_MS);
  // An HTTP-date names a day; Date.parse alone would also read "1.5" as a date.
  const at = /[a-z]/i.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(at) ? undefined : Math.min(Math.max(0, at - now), MAX_RETRY_AFTER_MS);
}
