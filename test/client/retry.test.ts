// The feed client's waits between retries: Retry-After read as seconds or as an HTTP date, and the
// backoff's ceiling and jitter when the server gives none.
import { describe, expect, it } from 'vitest';
import { backoffDelay, retryAfterMs } from '../../src/client/retry.js';

const NOW = Date.parse('2026-11-28T10:00:00Z');
const HOUR_MS = 3_600_000;

describe('retryAfterMs', () => {
  it.each([
    ['2', 2000],
    [' 0 ', 0],
    ['Sat, 28 Nov 2026 10:00:03 GMT', 3000],
    // A date already past: at once.
    ['Sat, 28 Nov 2026 09:59:00 GMT', 0],
    // Further off than an hour: an hour.
    ['86400', HOUR_MS],
    ['Sun, 29 Nov 2026 10:00:00 GMT', HOUR_MS],
  ])('reads %j as %i ms', (value, ms) => {
    expect(retryAfterMs(value, NOW)).toBe(ms);
  });

  it.each([null, '', '1.5', '-3', 'soon'])('finds no wait in %j', (value) => {
    expect(retryAfterMs(value, NOW)).toBeUndefined();
  });
});

describe('backoffDelay', () => {
  it('draws from the upper half of a ceiling that doubles from initialMs up to maxMs', () => {
    const lowest = (attempt: number) => backoffDelay(attempt, {}, () => 0);
    const highest = (attempt: number) => backoffDelay(attempt, {}, () => 1);
    expect([1, 2, 3, 7, 8, 50].map((a) => [lowest(a), highest(a)])).toEqual([
      [250, 500],
      [500, 1000],
      [1000, 2000],
      [15_000, 30_000],
      [15_000, 30_000],
      [15_000, 30_000],
    ]);
    expect(backoffDelay(3, { initialMs: 10, maxMs: 25 }, () => 0.5)).toBe(19);
  });
});
