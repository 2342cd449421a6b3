// WriteBatches: which writes share a statement, in what order, and what each is answered when a
// statement fails. The statements here are functions that record what they were given.
import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { DB } from '../../src/db/tables.js';
import { WriteBatches } from '../../src/db/write-batches.js';

interface Write {
  readonly key: string;
  readonly n: number;
}

/** A database view as WriteBatches sees one: a key for its queues, outside any transaction. */
const view = () => ({ isTransaction: false }) as Kysely<DB>;

/** Batches whose statements take `ms` each and fail as `fail` says; every statement's writes kept. */
function recorder(
  options: {
    ms?: number;
    fail?: (writes: readonly Write[]) => unknown;
    weight?: (write: Write) => number;
    /** The characters of a write's row besides its key. */
    chars?: (write: Write) => number;
    lockKey?: (write: Write) => string;
  } = {},
) {
  const statements: number[][] = [];
  const batchJson: string[] = [];
  const batches = new WriteBatches<Write, string>({
    ...(options.weight ? { weight: options.weight } : {}),
    ...(options.lockKey ? { lockKey: options.lockKey } : {}),
    row: (w) => ({ key: w.key, ...(options.chars ? { pad: 'x'.repeat(options.chars(w)) } : {}) }),
    writeAll: async (_db, orgId, writes, batch) => {
      statements.push(writes.map((w) => w.n));
      batchJson.push(batch);
      await new Promise((r) => setTimeout(r, options.ms ?? 5));
      const failure = options.fail?.(writes);
      if (failure) throw failure;
      return writes.map((w) => `${orgId}:${w.n}`);
    },
    apart: (a, b) => a.key === b.key,
  });
  return { batches, statements, batchJson };
}

describe('WriteBatches', () => {
  it('writes at once at rest, then together what arrived meanwhile', async () => {
    const { batches, statements } = recorder();
    const db = view();
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, n) => batches.write(db, 'org', { key: `k${n}`, n })),
    );
    expect(results).toEqual(['org:0', 'org:1', 'org:2', 'org:3', 'org:4', 'org:5']);
    expect(statements).toEqual([[0], [1, 2, 3, 4, 5]]);
  });

  it('keeps organizations and database views apart', async () => {
    const { batches, statements } = recorder();
    const [a, b] = [view(), view()];
    await Promise.all([
      batches.write(a, 'org-1', { key: 'x', n: 1 }),
      batches.write(a, 'org-2', { key: 'x', n: 2 }),
      batches.write(b, 'org-1', { key: 'x', n: 3 }),
    ]);
    expect(statements.sort()).toEqual([[1], [2], [3]]);
  });

  it('never puts two writes of one key in a statement, nor lets a later write overtake an earlier one', async () => {
    const { batches, statements } = recorder();
    const db = view();
    const keys = ['a', 'a', 'b', 'a', 'c', 'b', 'd'];
    await Promise.all(keys.map((key, n) => batches.write(db, 'org', { key, n })));
    // 0 alone (at rest); then 1 (a), 2 (b), 4 (c), 6 (d); 3 waits for 1, and 5 for 2.
    expect(statements).toEqual([[0], [1, 2, 4, 6], [3, 5]]);
  });

  it('writes a refused batch again in halves, so that only the write at fault fails', async () => {
    const duplicate = Object.assign(new Error('duplicate key'), { code: '23505' });
    const { batches, statements } = recorder({
      fail: (writes) => (writes.some((w) => w.n === 3) ? duplicate : undefined),
    });
    const db = view();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 5 }, (_, n) => batches.write(db, 'org', { key: `k${n}`, n })),
    );
    expect(outcomes.map((o) => o.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    expect((outcomes[3] as PromiseRejectedResult).reason).toBe(duplicate);
    expect(statements).toEqual([[0], [1, 2, 3, 4], [1, 2], [3, 4], [3], [4]]);
  });

  it('fails every write at once when the database is unavailable, those waiting untried', async () => {
    const lost = Object.assign(new Error('Connection terminated unexpectedly'), {});
    const { batches, statements } = recorder({ fail: () => lost });
    const db = view();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 4 }, (_, n) => batches.write(db, 'org', { key: `k${n}`, n })),
    );
    expect(outcomes.every((o) => o.status === 'rejected' && o.reason === lost)).toBe(true);
    // 1, 2 and 3 arrived while 0 was written: they would only meet the same failure.
    expect(statements).toEqual([[0]]);
  });

  const timeout = () =>
    Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });

  it('writes a batch that runs past the time limit again in halves, each within it', async () => {
    const { batches, statements } = recorder({
      fail: (writes) => (writes.length > 3 ? timeout() : undefined),
    });
    const db = view();
    const results = await Promise.all(
      Array.from({ length: 7 }, (_, n) => batches.write(db, 'org', { key: `k${n}`, n })),
    );
    expect(results).toHaveLength(7);
    expect(statements).toEqual([[0], [1, 2, 3, 4, 5, 6], [1, 2, 3], [4, 5, 6]]);
  });

  it('splits a timed-out batch once: a half that runs past the limit too fails whole', async () => {
    // Write 2 waits behind a lock held elsewhere: every statement with it runs out of time.
    const { batches, statements } = recorder({
      fail: (writes) => (writes.some((w) => w.n === 2) ? timeout() : undefined),
    });
    const db = view();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 7 }, (_, n) => batches.write(db, 'org', { key: `k${n}`, n })),
    );
    expect(outcomes.map((o) => o.status)).toEqual([
      'fulfilled',
      'rejected',
      'rejected',
      'rejected',
      'fulfilled',
      'fulfilled',
      'fulfilled',
    ]);
    expect(statements).toEqual([[0], [1, 2, 3, 4, 5, 6], [1, 2, 3], [4, 5, 6]]);
  });

  it('stops splitting once the database is lost, failing the rest at once', async () => {
    const duplicate = Object.assign(new Error('duplicate key'), { code: '23505' });
    const lost = new Error('Connection terminated unexpectedly');
    let down = false;
    const { batches, statements } = recorder({
      fail: (writes) => {
        if (down) return lost;
        if (writes.length > 1) {
          down = writes.length < 4; // the database goes away while the batch is split
          return duplicate;
        }
        return undefined;
      },
    });
    const db = view();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 7 }, (_, n) => batches.write(db, 'org', { key: `k${n}`, n })),
    );
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', ...Array(6).fill('rejected')]);
    expect(outcomes.slice(1).map((o) => (o as PromiseRejectedResult).reason)).toEqual(Array(6).fill(lost));
    // The first half [1, 2, 3] is refused and split; [1, 2] finds the database gone: 3 and [4, 5, 6] are not tried.
    expect(statements).toEqual([[0], [1, 2, 3, 4, 5, 6], [1, 2, 3], [1, 2]]);
  });

  it('carries a weight of at most 10,000 a statement, a heavier write alone', async () => {
    const { batches, statements } = recorder({ weight: (w) => (w.n === 2 ? 12_000 : 4_000) });
    const db = view();
    await Promise.all(Array.from({ length: 6 }, (_, n) => batches.write(db, 'org', { key: `k${n}`, n })));
    expect(statements).toEqual([[0], [1], [2], [3, 4], [5]]);
  });

  it('carries at most 4 MiB of JSON a statement, a bigger write alone', async () => {
    const MiB = 1024 * 1024;
    const { batches, statements, batchJson } = recorder({
      chars: (w) => (w.n === 2 ? 5 * MiB : 1.5 * MiB),
    });
    const db = view();
    await Promise.all(Array.from({ length: 6 }, (_, n) => batches.write(db, 'org', { key: `k${n}`, n })));
    expect(statements).toEqual([[0], [1], [2], [3, 4], [5]]);
    expect(batchJson.every((json, n) => json.length <= 4 * MiB || statements[n]!.length === 1)).toBe(true);
  });

  it("gives a statement its writes' rows as one JSON array, in lock order, each with its place", async () => {
    const { batches, batchJson } = recorder({ lockKey: (w) => w.key });
    const db = view();
    const keys = ['first', 'd', 'b', 'c', 'a'];
    await Promise.all(keys.map((key, n) => batches.write(db, 'org', { key, n })));
    expect(JSON.parse(batchJson[0]!)).toEqual([{ n: 0, key: 'first' }]);
    // Writes 1 to 4 share the second statement: their places in it, listed in the order of their keys.
    expect(JSON.parse(batchJson[1]!)).toEqual([
      { n: 3, key: 'a' },
      { n: 1, key: 'b' },
      { n: 2, key: 'c' },
      { n: 0, key: 'd' },
    ]);
  });

  it('writes inside a transaction at once, alone', async () => {
    const { batches, statements } = recorder();
    const trx = { isTransaction: true } as Kysely<DB>;
    const results = await Promise.all([
      batches.write(trx, 'org', { key: 'a', n: 0 }),
      batches.write(trx, 'org', { key: 'b', n: 1 }),
    ]);
    expect(results).toEqual(['org:0', 'org:1']);
    expect(statements).toEqual([[0], [1]]);
  });

  it('carries at most 100 writes a statement', async () => {
    const { batches, statements } = recorder();
    const db = view();
    await Promise.all(Array.from({ length: 251 }, (_, n) => batches.write(db, 'org', { key: `k${n}`, n })));
    expect(statements.map((s) => s.length)).toEqual([1, 100, 100, 50]);
  });
});
