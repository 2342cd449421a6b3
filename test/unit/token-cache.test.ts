import { describe, expect, it } from 'vitest';
import { TOKEN_CACHE_TTL_MS, TokenCache } from '../../src/auth/token-cache.js';

describe('TokenCache', () => {
  it('keeps a check for its lifetime and not a millisecond longer', () => {
    const cache = new TokenCache<string>(1000);
    cache.set('org', 'k', 'v', 10_000, cache.generation);
    expect(cache.get('org', 'k', 10_999)).toBe('v');
    expect(cache.get('org', 'k', 11_000)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('lives a few seconds by default, as DESIGN.md allows', () => {
    expect(TOKEN_CACHE_TTL_MS).toBeGreaterThan(0);
    expect(TOKEN_CACHE_TTL_MS).toBeLessThanOrEqual(10_000);
  });

  it('keys by organization and credential together', () => {
    const cache = new TokenCache<string>(1000);
    cache.set('org1', 'k', 'one', 0, cache.generation);
    expect(cache.get('org2', 'k', 1)).toBeUndefined();
    expect(cache.get('org1', 'other', 1)).toBeUndefined();
    expect(cache.get('org1', 'k', 1)).toBe('one');
  });

  it("forgets one organization's checks and keeps the others'", () => {
    const cache = new TokenCache<string>(1000);
    cache.set('org1', 'a', 'a', 0, cache.generation);
    cache.set('org1', 'b', 'b', 0, cache.generation);
    cache.set('org2', 'c', 'c', 0, cache.generation);
    cache.invalidateOrg('org1');
    expect(cache.get('org1', 'a', 1)).toBeUndefined();
    expect(cache.get('org1', 'b', 1)).toBeUndefined();
    expect(cache.get('org2', 'c', 1)).toBe('c');
    cache.clear();
    expect(cache.get('org2', 'c', 1)).toBeUndefined();
  });

  it('does not remember a check read before an invalidation that landed while it was read', () => {
    const cache = new TokenCache<string>(1000);
    const readAt = cache.generation;
    cache.invalidateOrg('org1'); // the admin change commits while the token row is in flight
    cache.set('org1', 'k', 'stale', 0, readAt);
    expect(cache.get('org1', 'k', 1)).toBeUndefined();
    cache.set('org1', 'k', 'fresh', 0, cache.generation);
    expect(cache.get('org1', 'k', 1)).toBe('fresh');
  });

  it('remembers nothing with a lifetime of zero', () => {
    const cache = new TokenCache<string>(0);
    cache.set('org', 'k', 'v', 0, cache.generation);
    expect(cache.size).toBe(0);
  });

  it('holds at most 10,000 checks, dropping the oldest first', () => {
    const cache = new TokenCache<number>(60_000);
    for (let i = 0; i < 10_001; i++) cache.set('org', `k${i}`, i, 0, cache.generation);
    expect(cache.size).toBe(10_000);
    expect(cache.get('org', 'k0', 1)).toBeUndefined();
    expect(cache.get('org', 'k1', 1)).toBe(1);
    expect(cache.get('org', 'k10000', 1)).toBe(10_000);
  });
});
