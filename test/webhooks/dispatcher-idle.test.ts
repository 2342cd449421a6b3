// A dispatcher with no endpoint to serve costs a query when the feed moves, not a loop of them.
import type { KyselyPlugin } from 'kysely';
import { expect, it } from 'vitest';
import { WebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { SecretBox } from '../../src/webhooks/secret-box.js';
import { type Harness, useHarness } from '../helpers/harness.js';

let harness: Harness;
useHarness((h) => {
  harness = h;
});

it('asks the database once per advance of the feed while no endpoint exists', async () => {
  let queries = 0;
  const counting: KyselyPlugin = {
    transformQuery: (args) => {
      queries++;
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  const listeners = new Set<(last: bigint) => void>();
  const feed = {
    onAdvance: (listener: (last: bigint) => void) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  const dispatcher = new WebhookDispatcher(
    harness.database.db.withPlugin(counting),
    feed,
    new SecretBox('a key for this test only'),
    { timeoutMs: 1000, concurrency: 2, retryDelaysMs: [100], allowPrivate: true },
  );
  dispatcher.start();
  try {
    const advances = 20;
    for (let n = 1; n <= advances; n++) {
      for (const listener of listeners) listener(BigInt(n));
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    // One look for endpoints per advance (and one at start): a dispatcher that spun would make thousands.
    expect(queries).toBeGreaterThan(0);
    expect(queries).toBeLessThanOrEqual(advances + 3);
  } finally {
    await dispatcher.stop();
  }
});
