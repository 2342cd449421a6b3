// Concurrent writers across organizations and a follower reading the feed by cursor: the follower
// sees every committed change once, nothing else, in an order that never contradicts the commits.
import { describe, expect, it } from 'vitest';
import { proveFeed } from '../helpers/feed-proof.js';
import { type Harness, useHarness } from '../helpers/harness.js';

let harness: Harness;
useHarness((h) => {
  harness = h;
});

describe('the change feed under concurrent writers', () => {
  it('a follower misses nothing, sees nothing twice and nothing uncommitted', async () => {
    const orgs = [];
    const tokens = new Map<string, string>();
    for (let i = 0; i < 3; i++) {
      const org = await harness.createOrg({ name: `proof ${i}`, groupSync: true });
      orgs.push(org.id);
      tokens.set(org.id, await harness.createToken(org.id));
    }
    const { changes } = await proveFeed(
      {
        scim: async (orgId, _writer, method, path, body) => {
          const req = harness.http[method.toLowerCase() as 'post'](`/scim/v2/${orgId}${path}`).set(
            'Authorization',
            `Bearer ${tokens.get(orgId)}`,
          );
          const res = await (body === undefined
            ? req
            : req.set('Content-Type', 'application/scim+json').send(body as object));
          return { status: res.status, body: res.body };
        },
        changes: async (query) => {
          const res = await harness.admin('get', `/changes?${query}`);
          return { status: res.status, body: res.body };
        },
      },
      { orgIds: orgs, concurrency: 32, writesEach: 16 },
    );
    expect(changes).toBeGreaterThan(32 * 16 * 3);
  }, 120_000);
});
