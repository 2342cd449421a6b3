import { describe, expect, it } from 'vitest';
import { PoolWaitTimeoutError } from '../../src/db/failures.js';
import { FairShare } from '../../src/db/fair-share.js';

/** Records the order in which requests were admitted. */
function tracker(share: FairShare) {
  const admitted: string[] = [];
  const ask = (org: string, label = org) =>
    share.enter(org).then(() => {
      admitted.push(label);
    });
  return { admitted, ask };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('FairShare', () => {
  it('admits at once while the pool and the organization have room', async () => {
    const share = new FairShare({ size: 4, perOrg: 2, waitMs: 1000 });
    await share.enter('a');
    await share.enter('b');
    await share.enter('a');
    expect(share.inUse).toBe(3);
    expect(share.waiting).toBe(0);
  });

  it("keeps one organization to its share: its extra requests wait, another's do not", async () => {
    const share = new FairShare({ size: 4, perOrg: 2, waitMs: 1000 });
    const { admitted, ask } = tracker(share);
    const noisy = [ask('noisy', 'n1'), ask('noisy', 'n2'), ask('noisy', 'n3'), ask('noisy', 'n4')];
    await settle();
    expect(admitted).toEqual(['n1', 'n2']);
    await ask('quiet', 'q1');
    expect(admitted).toEqual(['n1', 'n2', 'q1']);
    // A noisy connection comes back: the next noisy request takes it, in its own order.
    share.leave('noisy');
    await settle();
    expect(admitted).toEqual(['n1', 'n2', 'q1', 'n3']);
    share.leave('noisy');
    share.leave('noisy');
    share.leave('quiet');
    await Promise.all(noisy);
    expect(admitted.at(-1)).toBe('n4');
  });

  it('hands a freed connection to the waiting organizations in turn, not in arrival order', async () => {
    const share = new FairShare({ size: 1, perOrg: 1, waitMs: 1000 });
    const { admitted, ask } = tracker(share);
    await ask('x', 'x1');
    const labels = ['a1', 'a2', 'a3', 'b1', 'c1', 'b2'];
    const waiting = labels.map((label) => ask(label[0]!, label));
    for (const _ of labels) {
      // The holder (its organization is the label's first letter) gives the connection back.
      share.leave(admitted.at(-1)![0]!);
      await settle();
    }
    await Promise.all(waiting);
    expect(admitted).toEqual(['x1', 'a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
  });

  it('refuses a request that waited longer than waitMs with PoolWaitTimeoutError, and forgets it', async () => {
    const share = new FairShare({ size: 1, perOrg: 1, waitMs: 30 });
    await share.enter('a');
    const started = Date.now();
    await expect(share.enter('b')).rejects.toBeInstanceOf(PoolWaitTimeoutError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    expect(share.waiting).toBe(0);
    share.leave('a');
    expect(share.inUse).toBe(0);
    // The timed-out request holds nothing: the next one is admitted at once.
    await share.enter('b');
    expect(share.inUse).toBe(1);
  });

  it('never lends more than the pool holds, whatever the order of arrivals and returns', async () => {
    const share = new FairShare({ size: 3, perOrg: 2, waitMs: 5000 });
    const orgs = ['a', 'b', 'c', 'd'];
    let held = 0;
    let most = 0;
    const perOrg = new Map<string, number>();
    let mostPerOrg = 0;
    const work = Array.from({ length: 200 }, async (_, i) => {
      const org = orgs[i % orgs.length]!;
      await share.enter(org);
      held++;
      perOrg.set(org, (perOrg.get(org) ?? 0) + 1);
      most = Math.max(most, held);
      mostPerOrg = Math.max(mostPerOrg, perOrg.get(org)!);
      await new Promise((resolve) => setTimeout(resolve, i % 3));
      held--;
      perOrg.set(org, perOrg.get(org)! - 1);
      share.leave(org);
    });
    await Promise.all(work);
    expect(most).toBe(3);
    expect(mostPerOrg).toBe(2);
    expect(share.inUse).toBe(0);
    expect(share.waiting).toBe(0);
  });
});
