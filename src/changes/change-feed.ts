// The change feed as this process serves it: numbering changes soon after its own writes commit,
// answering reads by cursor, holding long polls until a change arrives, and removing changes past
// retention. Other processes' changes are heard by LISTEN where there is a direct connection, and
// found by a recheck every second while anyone waits.
import type { Kysely } from 'kysely';
import type { Listening } from '../db/database.js';
import type { DB } from '../db/tables.js';
import type { Logger } from '../log.js';
import type { ChangePage } from './changes.js';
import {
  type ChangeFilter,
  NUMBER_AT_ONCE,
  numberChanges,
  purgeChanges,
  readChanges,
} from './changes.repository.js';

/** The channel scim_number_changes notifies, with `<schema>:<last position>`. */
const CHANNEL = 'scimd_changes';
/** A process numbers its writes' changes at most this often. */
const NUMBER_EVERY_MS = 20;
/** While a long poll waits, changes nobody told this process of are looked for this often. */
const RECHECK_MS = 1_000;
/** A read filtered by type looks at this many positions at most, so a rare type costs a bounded scan. */
const FILTERED_WINDOW = 50_000n;
const FIRST_PURGE_MS = 60 * 1000;
const PURGE_EVERY_MS = 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

export const DEFAULT_RETENTION_DAYS = 30;

export class CursorExpiredError extends Error {}

/** A cursor after the feed's last position: no cursor this feed gave. */
export class CursorAheadError extends Error {
  constructor(readonly last: bigint) {
    super(`past the end of the feed (${last})`);
  }
}

/** The reader of a long poll lost its right to read (its API key was revoked) while it waited. */
export class ReaderRevokedError extends Error {}

export interface ReadRequest {
  /** The cursor to read after; undefined starts at the oldest change kept. */
  readonly after: bigint | undefined;
  readonly filter: ChangeFilter;
  readonly limit: number;
  /** How long to wait for a change when there is none yet; 0 answers at once. */
  readonly waitMs: number;
  /** Ends the wait (the client went away). */
  readonly signal?: AbortSignal;
  /** Who reads (an API key's id), so that readerRevoked ends the wait. */
  readonly reader?: string;
  /** Asked after each wait, after reading: false throws ReaderRevokedError, answering nothing read. */
  readonly stillAllowed?: () => Promise<boolean>;
}

interface Waiter {
  readonly after: bigint;
  readonly reader: string | undefined;
  readonly wake: () => void;
}

export interface ChangeFeedOptions {
  readonly logger?: Logger;
  readonly retentionDays?: number;
  /** The schema the tables live in (tests), to tell this feed's notifications from others'. */
  readonly schema?: string | undefined;
  /** Database.listen, where this process can LISTEN. */
  readonly listen?:
    | ((channel: string, onMessage: (payload: string) => void, onGap: () => void) => Listening)
    | undefined;
}

export class ChangeFeed {
  private readonly waiters = new Set<Waiter>();
  private readonly listeners = new Set<(last: bigint) => void>();
  /** The newest position this process knows of. */
  private newest = 0n;
  private numbering: Promise<void> | undefined;
  private numberTimer: NodeJS.Timeout | undefined;
  private lastNumberedAt = 0;
  private recheckTimer: NodeJS.Timeout | undefined;
  private purgeTimer: NodeJS.Timeout | undefined;
  private listening: Listening | undefined;
  private stopped = false;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly options: ChangeFeedOptions = {},
  ) {}

  /** Listens for other processes' changes and removes old changes every hour. */
  async start(): Promise<void> {
    const schema = this.options.schema ?? 'public';
    this.listening = this.options.listen?.(
      CHANNEL,
      (payload) => {
        const at = payload.lastIndexOf(':');
        if (payload.slice(0, at) === schema) this.advance(BigInt(payload.slice(at + 1)));
      },
      () => this.numberSoon(),
    );
    await this.listening?.ready;
    this.purgeTimer = setTimeout(() => {
      void this.purge();
      this.purgeTimer = setInterval(() => void this.purge(), PURGE_EVERY_MS).unref();
    }, FIRST_PURGE_MS).unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.numberTimer);
    clearInterval(this.recheckTimer);
    clearTimeout(this.purgeTimer);
    clearInterval(this.purgeTimer);
    for (const waiter of this.waiters) waiter.wake();
    this.waiters.clear();
    await this.listening?.stop();
    await this.numbering;
  }

  /**
   * A write of this process committed: its changes are numbered at once when a long poll here waits,
   * otherwise within NUMBER_EVERY_MS (which is how long other processes' long polls may wait).
   */
  written(): void {
    if (this.waiters.size > 0) void this.numberNow();
    else this.numberSoon();
  }

  /**
   * Changes after `after`, waiting up to `waitMs` for one when there is none. Throws
   * CursorExpiredError when changes after the cursor have been removed by retention, and
   * CursorAheadError for a cursor past the last position (the feed never moves a reader back).
   */
  async read(request: ReadRequest): Promise<ChangePage> {
    const deadline = Date.now() + request.waitMs;
    let after = request.after;
    let waited = false;
    for (;;) {
      const { last, purgedThrough } = await numberChanges(this.db);
      this.advance(last);
      after ??= purgedThrough;
      if (after < purgedThrough) throw new CursorExpiredError();
      if (after > last) throw new CursorAheadError(last);
      const filtered = request.filter.types !== undefined;
      const through = filtered && last - after > FILTERED_WINDOW ? after + FILTERED_WINDOW : last;
      const changes = await readChanges(this.db, after, through, request.filter, request.limit);
      // Read before asking, so that nothing written after a revocation is answered.
      if (waited && request.stillAllowed && !(await request.stillAllowed())) throw new ReaderRevokedError();
      // A full page continues after its last change; otherwise everything up to `through` was seen.
      const next = changes.length === request.limit ? BigInt(changes.at(-1)!.cursor) : through;
      const remaining = deadline - Date.now();
      if (changes.length > 0 || remaining <= 0 || this.stopped || request.signal?.aborted) {
        return { changes, nextCursor: next.toString() };
      }
      after = next;
      if (next >= last) await this.waitAfter(after, remaining, request);
      waited = true;
    }
  }

  /** Long polls waiting here now. */
  get longPolls(): number {
    return this.waiters.size;
  }

  /** Ends the waits of `reader` at once: they find it revoked. */
  readerRevoked(reader: string): void {
    for (const waiter of [...this.waiters]) if (waiter.reader === reader) waiter.wake();
  }

  /** Resolves once a position after `after` is known, after `ms`, on abort, or when its reader is revoked. */
  private waitAfter(after: bigint, ms: number, { signal, reader }: ReadRequest): Promise<void> {
    if (this.newest > after) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.waiters.delete(waiter);
        if (this.waiters.size === 0) {
          clearInterval(this.recheckTimer);
          this.recheckTimer = undefined;
        }
        resolve();
      };
      const waiter: Waiter = { after, reader, wake: done };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done);
      this.waiters.add(waiter);
      this.recheckTimer ??= setInterval(() => this.numberSoon(), RECHECK_MS).unref();
    });
  }

  /** Calls `listener` whenever a newer position is known; returns what stops it. */
  onAdvance(listener: (last: bigint) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private advance(last: bigint): void {
    if (last <= this.newest) return;
    this.newest = last;
    for (const listener of this.listeners) listener(last);
    for (const waiter of [...this.waiters]) if (waiter.after < last) waiter.wake();
  }

  /** Numbers at once when the last numbering is NUMBER_EVERY_MS old, otherwise when it will be. */
  private numberSoon(): void {
    if (this.stopped || this.numberTimer) return;
    const wait = Math.max(0, this.lastNumberedAt + NUMBER_EVERY_MS - Date.now());
    this.numberTimer = setTimeout(() => {
      this.numberTimer = undefined;
      void this.numberNow();
    }, wait);
  }

  private async numberNow(): Promise<void> {
    if (this.numbering) {
      // One numbering at a time; one more after it catches what committed meanwhile.
      await this.numbering;
      return this.written();
    }
    this.lastNumberedAt = Date.now();
    this.numbering = (async () => {
      try {
        const { last, numbered } = await numberChanges(this.db);
        this.advance(last);
        // More than one numbering takes: keep going.
        if (numbered >= NUMBER_AT_ONCE) this.numberSoon();
      } catch (err) {
        this.options.logger?.warn({ err }, 'could not number changes; readers number them as they read');
      } finally {
        this.numbering = undefined;
      }
    })();
    await this.numbering;
  }

  /** Removes changes older than the retention period. */
  async purge(now = new Date()): Promise<number> {
    const days = this.options.retentionDays ?? DEFAULT_RETENTION_DAYS;
    try {
      const removed = await purgeChanges(this.db, new Date(now.getTime() - days * DAY_MS));
      if (removed > 0) this.options.logger?.info({ removed, days }, 'removed changes past retention');
      return removed;
    } catch (err) {
      this.options.logger?.warn({ err }, 'could not remove changes past retention; trying again in an hour');
      return 0;
    }
  }
}
