// FeedClient: reads and follows scimd's change feed (GET /admin/v1/changes) with an API key, long
// polling, and retrying what a restart or an overload answers. It uses the global fetch and imports
// nothing of the server: only the types of what the feed sends.
import type { Change, ChangeOf, ChangeType, FeedPage } from '../changes/change-types.js';
import { AccessDenied, CursorExpired, FeedError } from './feed-errors.js';
import { type Backoff, backoffDelay, retryAfterMs } from './retry.js';

/** How long one request of follow() waits for a change: under the server's 30 s and most proxies' idle timeouts. */
const FOLLOW_WAIT_SECONDS = 25;
/** A request still unanswered this long after its wait is given up and tried again: its connection went silent. */
const REQUEST_GRACE_MS = 30_000;
/** Answers a moment can change: an overload, a restart behind a proxy. */
const RETRIED_STATUSES = new Set([429, 502, 503, 504]);

export interface FeedClientOptions {
  /** Where scimd serves, with its base path if it has one: `https://scimd.internal`. */
  readonly url: string;
  /** An API key (`scimd api-key create`): it may read the feed and nothing else. */
  readonly apiKey: string;
  /** The waits between retries when the server gives no Retry-After. */
  readonly backoff?: Backoff;
  /** Told of each retry before its wait: the place to log that scimd is out of reach. */
  readonly onRetry?: (retry: Retry) => void;
  /** The fetch to use; the global one unless given. */
  readonly fetch?: typeof fetch;
  /** How a retry waits; it resolves, early, when `signal` aborts (tests). */
  readonly sleep?: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
  /** Now, in milliseconds since the epoch, to read a Retry-After date by (tests). */
  readonly now?: () => number;
}

export interface Retry {
  /** 1 for a request's first retry. */
  readonly attempt: number;
  readonly delayMs: number;
  /** The status retried; undefined when the request failed without one. */
  readonly status: number | undefined;
  /** Why the request failed without a status (the connection was refused, say). */
  readonly error: unknown;
}

export interface ReadOptions<T extends ChangeType = ChangeType> {
  /** Read after this cursor (a change's `cursor`, a page's `nextCursor`); none starts at the oldest change kept. */
  readonly after?: string | undefined;
  /** One organization's changes only. */
  readonly orgId?: string | undefined;
  /** These types of change only; what is read is typed accordingly. */
  readonly types?: readonly T[] | undefined;
  /** Changes a page, 1 to 1,000 (the server's 100 unless given). */
  readonly limit?: number | undefined;
  /** Seconds (30 at most) to wait for a change when there is none yet: 0 for read(), 25 for follow(). */
  readonly wait?: number | undefined;
  /** Ends it: read() rejects with the signal's reason, a follow's loop ends. */
  readonly signal?: AbortSignal | undefined;
}

/**
 * A follow's changes, in feed order, for `for await`. Store `change.cursor` once you have processed a
 * change. `cursor` is where to follow from again: after the last change the loop finished with, or
 * further on when a filtered follow skipped changes that are not yours (so store it when the loop
 * ends, and now and then while it waits, to keep the checkpoint of a quiet filter within retention).
 */
export interface Follower<C extends Change = Change> extends AsyncIterable<C> {
  readonly cursor: string | undefined;
}

export class FeedClient {
  readonly #endpoint: string;
  readonly #apiKey: string;
  readonly #backoff: Backoff;
  readonly #onRetry: ((retry: Retry) => void) | undefined;
  readonly #fetch: typeof fetch;
  readonly #sleep: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
  readonly #now: () => number;

  constructor(options: FeedClientOptions) {
    if (!options.apiKey) throw new TypeError('FeedClient needs an apiKey');
    this.#endpoint = `${new URL(options.url).href.replace(/\/+$/, '')}/admin/v1/changes`;
    this.#apiKey = options.apiKey;
    this.#backoff = options.backoff ?? {};
    this.#onRetry = options.onRetry;
    this.#fetch = options.fetch ?? fetch;
    this.#sleep = options.sleep ?? sleep;
    this.#now = options.now ?? Date.now;
  }

  /**
   * One page of changes after `after`. Network errors and 429, 502, 503 and 504 are retried until it
   * comes; CursorExpired (410), AccessDenied (401, 403) and other FeedErrors are thrown.
   */
  async read<T extends ChangeType = ChangeType>(
    options: ReadOptions<T> = {},
  ): Promise<FeedPage<ChangeOf<T>>> {
    const page = await this.#page(options, options.wait ?? 0);
    if (!page) throw options.signal?.reason;
    return page as FeedPage<ChangeOf<T>>;
  }

  /**
   * Follows the feed from `after` (the oldest change kept when none), long polling, retrying as read()
   * does. The loop ends when `signal` aborts, also in the middle of a wait; it throws CursorExpired
   * when the cursor is past retention, and the other FeedErrors read() throws.
   */
  follow<T extends ChangeType = ChangeType>(options: ReadOptions<T> = {}): Follower<ChangeOf<T>> {
    const { signal } = options;
    const wait = options.wait ?? FOLLOW_WAIT_SECONDS;
    const readAfter = (after: string | undefined) => this.#page({ ...options, after }, wait);
    let cursor = options.after;
    return {
      get cursor() {
        return cursor;
      },
      async *[Symbol.asyncIterator]() {
        for (;;) {
          const page = await readAfter(cursor);
          if (!page) return;
          for (const change of page.changes) {
            yield change as ChangeOf<T>;
            // The loop asked for the next change: it is done with this one.
            cursor = change.cursor;
            if (signal?.aborted) return;
          }
          cursor = page.nextCursor;
        }
      },
    };
  }

  /** A page, retried until it comes; undefined once `signal` aborts. */
  async #page(options: ReadOptions, wait: number): Promise<FeedPage | undefined> {
    const url = this.#url(options, wait);
    const { signal } = options;
    for (let attempt = 1; ; attempt++) {
      if (signal?.aborted) return undefined;
      let failed: { status?: number; retryAfterMs?: number | undefined; error?: unknown };
      try {
        const answer = await this.#get(url, signal, wait * 1000 + REQUEST_GRACE_MS);
        if (answer.status === 200) return parsePage(answer.text);
        if (!RETRIED_STATUSES.has(answer.status)) throw refusal(answer.status, answer.text, options.after);
        failed = { status: answer.status, retryAfterMs: retryAfterMs(answer.retryAfter, this.#now()) };
      } catch (error) {
        if (signal?.aborted) return undefined;
        if (error instanceof FeedError) throw error;
        failed = { error };
      }
      const delayMs = failed.retryAfterMs ?? backoffDelay(attempt, this.#backoff);
      this.#onRetry?.({ attempt, delayMs, status: failed.status, error: failed.error });
      await this.#sleep(delayMs, signal);
    }
  }

  #url(options: ReadOptions, wait: number): string {
    const query = new URLSearchParams();
    if (options.after !== undefined) query.set('after', options.after);
    if (options.orgId !== undefined) query.set('orgId', options.orgId);
    if (options.types !== undefined) query.set('types', options.types.join(','));
    if (options.limit !== undefined) query.set('limit', String(options.limit));
    if (wait > 0) query.set('wait', String(wait));
    const search = query.toString();
    return search ? `${this.#endpoint}?${search}` : this.#endpoint;
  }

  /** One GET, its body read; ended by `signal` or after `timeoutMs`. */
  async #get(url: string, signal: AbortSignal | undefined, timeoutMs: number) {
    const request = new AbortController();
    const abort = () => request.abort(signal?.reason);
    signal?.addEventListener('abort', abort, { once: true });
    const timer = setTimeout(() => request.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    try {
      const response = await this.#fetch(url, {
        headers: { authorization: `Bearer ${this.#apiKey}`, accept: 'application/json' },
        signal: request.signal,
      });
      // A long poll's body comes at the end of its wait: within the same deadline and signal.
      const text = await response.text();
      return { status: response.status, retryAfter: response.headers.get('retry-after'), text };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', abort);
    }
  }
}

function parsePage(text: string): FeedPage {
  let page: unknown;
  try {
    page = JSON.parse(text);
  } catch {
    page = undefined;
  }
  const { changes, nextCursor } = (page ?? {}) as Partial<FeedPage>;
  if (!Array.isArray(changes) || typeof nextCursor !== 'string') {
    throw new FeedError(200, undefined, 'the answer is not a page of the change feed: is url scimd?');
  }
  return { changes, nextCursor };
}

/** The error an answer that is not retried stands for; the admin API's body is `{error: {code, message}}`. */
function refusal(status: number, text: string, after: string | undefined): FeedError {
  let body: { error?: { code?: unknown; message?: unknown } } | undefined;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const code = typeof body?.error?.code === 'string' ? body.error.code : undefined;
  const message = typeof body?.error?.message === 'string' ? body.error.message : `scimd answered ${status}`;
  if (status === 410) return new CursorExpired(after ?? '', message);
  if (status === 401 || status === 403) return new AccessDenied(status, code, message);
  return new FeedError(status, code, message);
}

/** Waits `ms`, or until `signal` aborts. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
