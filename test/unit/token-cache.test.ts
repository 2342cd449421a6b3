import { describe, expect, it } from 'vitest';
import { TOKEN_CACHE_TTL_MS, TokenCache } from '../../src/orgs/token-cache.js';

/** A clock the test moves by hand. */
const clock = () => {
  let at = 10_000;
  return { now: () => at, move: (ms: number) => (at += ms) };
};

describe('TokenCache', () => {
  it('keeps a check for its lifetime and no longer', () => {
    const time = clock();
    const cache = new TokenCache<string>(1000, time);
    cache.set('org', 'k', 'v', cache.generation);
    time.move(999);
    expect(cache.get('org', 'k')).toBe('v');
    time.move(2);
    expect(cache.get('org', 'k')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('lives a few seconds by default, as the design allows', () => {
    expect(TOKEN_CACHE_TTL_MS).toBeGreaterThan(0);
    expect(TOKEN_CACHE_TTL_MS).toBeLessThanOrEqual(10_000);
  });

  it('keys by organization and credential together', () => {
    const cache = new TokenCache<string>(1000);
    cache.set('org1', 'k', 'one', cache.generation);
    expect(cache.get('org2', 'k')).toBeUndefined();
    expect(cache.get('org1', 'other')).toBeUndefined();
    expect(cache.get('org1', 'k')).toBe('one');
  });

  it("forgets one organization's checks and keeps the others'", () => {
    const cache = new TokenCache<string>(1000);
    cache.set('org1', 'a', 'a', cache.generation);
    cache.set('org1', 'b', 'b', cache.generation);
    cache.set('org2', 'c', 'c', cache.generation);
    cache.invalidateOrg('org1');
    expect(cache.get('org1', 'a')).toBeUndefined();
    expect(cache.get('org1', 'b')).toBeUndefined();
    expect(cache.get('org2', 'c')).toBe('c');
    cache.clear();
    expect(cache.get('org2', 'c')).toBeUndefined();
  });

  it('does not remember a check read before an invalidation that landed while it was read', () => {
    const cache = new TokenCache<string>(1000);
    const readAt = cache.generation;
    cache.invalidateOrg('org1'); // the admin change commits while the token row is in flight
    cache.set('org1', 'k', 'stale', readAt);
    expect(cache.get('org1', 'k')).toBeUndefined();
    cache.set('org1', 'k', 'fresh', cache.generation);
    expect(cache.get('org1', 'k')).toBe('fresh');
  });

  it('remembers nothing with a lifetime of zero', () => {
    const cache = new TokenCache<string>(0);
    cache.set('org', 'k', 'v', cache.generation);
    expect(cache.size).toBe(0);
  });

  it('holds at most 10,000 checks, dropping the oldest first', () => {
    const cache = new TokenCache<number>(60_000);
    for (let i = 0; i < 10_001; i++) cache.set('org', `k${i}`, i, cache.generation);
    expect(cache.size).toBe(10_000);
    expect(cache.get('org', 'k0')).toBeUndefined();
    expect(cache.get('org', 'k1')).toBe(1);
    expect(cache.get('org', 'k10000')).toBe(10_000);
  });
});
