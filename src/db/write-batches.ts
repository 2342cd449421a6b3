// Concurrent writes of one kind to one organization share a statement. While a statement of theirs
// is in flight, the writes that arrive wait for it, then go together: one round trip and one commit
// for many, where the round trip and the commit cost a write more than its rows do. At rest a write
// goes at once. A write becomes its row of the statement's JSON when it is queued, so a statement's
// size is known before it is sent. Each write keeps its own outcome: a batch refused for one write's
// sake (a unique value, a deadlock) is written again in halves, down to single writes; one that runs
// past the time limit is split once, so that a write stuck behind a lock holds up its neighbours for
// two time limits at most, not one for each halving.
import { type Kysely, sql } from 'kysely';
import { type DatabaseFailureKind, databaseFailure } from './failures.js';
import { param } from './statement.js';
import type { DB } from './tables.js';

/** Writes one statement carries at most. */
const MAX_BATCH = 100;
/** The weight one statement carries at most (a write heavier than this goes alone). */
const MAX_WEIGHT = 10_000;
/** The characters of JSON one statement carries at most (a write bigger than this goes alone). */
const MAX_CHARS = 4 * 1024 * 1024;

export interface WriteBatchesOptions<Item, Result> {
  /** A write as its row of the batch (batchRows), without `n`, which the batch adds: its place in it. */
  readonly row: (item: Item) => Record<string, unknown>;
  /**
   * Writes items of one organization in one statement, all or none: a result per item, in order.
   * `batch` is the items' rows as a JSON array, each with its item's place in `items` as `n`.
   */
  readonly writeAll: (
    db: Kysely<DB>,
    orgId: string,
    items: readonly Item[],
    batch: string,
  ) => Promise<readonly Result[]>;
  /**
   * The key of the rows a write locks that another statement may lock too: a batch lists its rows
   * in the order of their keys (inLockOrder).
   */
  readonly lockKey?: (item: Item) => string;
  /**
   * Whether two writes must go in separate statements (they write the same rows): the later waits
   * for a statement after the earlier's, so writes of one resource keep their order.
   */
  readonly apart?: (a: Item, b: Item) => boolean;
  /** The rows a write writes, when that can be many (a group's members): 1 unless given. */
  readonly weight?: (item: Item) => number;
}

interface Pending<Item, Result> {
  readonly item: Item;
  /** The item's row as JSON, without `n`. */
  readonly row: string;
  readonly done: (result: Result) => void;
  readonly failed: (error: unknown) => void;
}

interface Queue<Item, Result> {
  pending: Pending<Item, Result>[];
  writing: boolean;
}

/**
 * A failure no write causes alone, which writing them apart would only repeat. Not a time limit: a
 * batch may run past it where its halves would not.
 */
function failsEveryWrite(kind: DatabaseFailureKind | undefined): boolean {
  return kind === 'unavailable' || kind === 'busy';
}

/**
 * The batches of one kind of write: one instance per process and kind, created with the app and given
 * to what writes (resources/resource-writes.ts), over the one database the process writes to.
 */
export class WriteBatches<Item, Result> {
  /** The queue of each organization, whichever of its views of the database a write came through. */
  readonly #queues = new Map<string, Queue<Item, Result>>();

  constructor(private readonly options: WriteBatchesOptions<Item, Result>) {}

  /** Writes `item`; resolves with its result once its statement has committed. */
  async write(db: Kysely<DB>, orgId: string, item: Item): Promise<Result> {
    const row = JSON.stringify(this.options.row(item));
    // A transaction's statements are its own: no other write may join them.
    if (db.isTransaction) return (await this.#writeAll(db, orgId, [{ item, row }]))[0]!;
    let queue = this.#queues.get(orgId);
    if (!queue) {
      queue = { pending: [], writing: false };
      this.#queues.set(orgId, queue);
    }
    const { pending } = queue;
    const written = new Promise<Result>((done, failed) => pending.push({ item, row, done, failed }));
    if (!queue.writing) void this.#drain(db, orgId, queue);
    return written;
  }

  async #drain(db: Kysely<DB>, orgId: string, queue: Queue<Item, Result>) {
    queue.writing = true;
    try {
      while (queue.pending.length > 0) {
        const lost = await this.#write(db, orgId, this.#take(queue));
        if (lost !== undefined) {
          // The writes waiting behind would only meet the same failure, one batch after another.
          const waiting = queue.pending;
          queue.pending = [];
          for (const p of waiting) p.failed(lost);
        }
      }
    } finally {
      queue.writing = false;
      this.#queues.delete(orgId);
    }
  }

  /**
   * The next batch: the oldest writes up to the statement's size, weight and characters, less those
   * that must wait for one before them.
   */
  #take(queue: Queue<Item, Result>): Pending<Item, Result>[] {
    const { apart, weight } = this.options;
    const taken: Pending<Item, Result>[] = [];
    const left: Pending<Item, Result>[] = [];
    let load = 0;
    let chars = 0;
    let full = false;
    for (const p of queue.pending) {
      const w = weight?.(p.item) ?? 1;
      full ||=
        taken.length === MAX_BATCH ||
        (taken.length > 0 && (load + w > MAX_WEIGHT || chars + p.row.length > MAX_CHARS));
      // A write apart from one left behind waits too: it must not overtake it.
      const blocked =
        full ||
        (apart !== undefined &&
          (taken.some((q) => apart(q.item, p.item)) || left.some((q) => apart(q.item, p.item))));
      if (blocked) {
        left.push(p);
      } else {
        taken.push(p);
        load += w;
        chars += p.row.length;
      }
    }
    queue.pending = left;
    return taken;
  }

  /** One statement of these writes, their rows joined into its JSON. */
  #writeAll(
    db: Kysely<DB>,
    orgId: string,
    writes: readonly Pick<Pending<Item, Result>, 'item' | 'row'>[],
  ): Promise<readonly Result[]> {
    const { lockKey, writeAll } = this.options;
    const items = writes.map((w) => w.item);
    const rows = writes.map((w) => w.row);
    return writeAll(db, orgId, items, batchJson(rows, lockKey && items.map(lockKey)));
  }

  /**
   * Writes `batch`, in halves (first, then second) when it is refused, until the write at fault fails
   * alone; a half of a batch that ran past the time limit fails whole if it does too (`timedOut`).
   * Returns the failure that fails every write, if one did: then nothing more is tried.
   */
  async #write(
    db: Kysely<DB>,
    orgId: string,
    batch: readonly Pending<Item, Result>[],
    timedOut = false,
  ): Promise<unknown> {
    try {
      const results = await this.#writeAll(db, orgId, batch);
      for (const [n, p] of batch.entries()) p.done(results[n]!);
      return undefined;
    } catch (error) {
      const kind = databaseFailure(error)?.kind;
      const everyWrite = failsEveryWrite(kind);
      const timeout = kind === 'timeout';
      if (batch.length === 1 || everyWrite || (timeout && timedOut)) {
        for (const p of batch) p.failed(error);
        return everyWrite ? error : undefined;
      }
      const half = Math.ceil(batch.length / 2);
      const split = timedOut || timeout;
      const lost = await this.#write(db, orgId, batch.slice(0, half), split);
      if (lost === undefined) return this.#write(db, orgId, batch.slice(half), split);
      for (const p of batch.slice(half)) p.failed(lost);
      return lost;
    }
  }
}

/** The rows of a batch as one JSON array, in lock order, each with its place in the batch as `n`. */
function batchJson(rows: readonly string[], lockKeys: readonly string[] | undefined): string {
  const order = rows.map((_, n) => n);
  if (lockKeys) inLockOrder(order, (n) => lockKeys[n]!);
  return `[${order.map((n) => (rows[n] === '{}' ? `{"n":${n}}` : `{"n":${n},${rows[n]!.slice(1)}`)).join(',')}]`;
}

/**
 * A batch's writes as the rows of a statement (`from batchRows(…)`), named `batch`: the parameter
 * `batch` is a JSON array with an object per write, read as records of these `columns` (`name type,
 * …`). Postgres does not foresee the rows of JSON from its value, so one generic plan serves batches
 * of every size.
 */
export function batchRows<Row>(columns: string) {
  return sql<Row>`jsonb_to_recordset(${param('batch')}::jsonb)`.as(sql.raw(`batch(${columns})`));
}

/**
 * Rows in the order of their `key`, the order a statement then locks the rows it writes in: two
 * statements (of two kinds, or of two processes) that write the same rows take them in the same
 * order, and never wait on each other in a circle.
 */
export function inLockOrder<T>(rows: T[], key: (row: T) => string): T[] {
  return rows.sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  });
}
