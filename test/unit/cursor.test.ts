import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  CURSOR_TIMEOUT_SECONDS,
  decodeCursor,
  encodeCursor,
  queryFingerprint,
} from '../../src/resources/cursor.js';

const key = randomBytes(32);
const now = new Date('2026-11-21T12:00:00Z');
const query = queryFingerprint(['User', 'userName pr', 'userName:false']);
const cursor = {
  direction: 'next' as const,
  position: { value: 'bob', id: '2819c223-7f76-453a-919d-413861904646' },
};

function scimTypeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return (error as { scimType?: string }).scimType;
  }
  return 'no error';
}

describe('cursors', () => {
  it('round-trip, URL-safe and opaque', () => {
    const text = encodeCursor(cursor, query, 10, key, now);
    expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(Buffer.from(text, 'base64url').toString('latin1')).not.toContain('bob');
    expect(decodeCursor(text, query, 10, key, now)).toEqual(cursor);
  });

  it('refuse a changed, foreign, or made-up cursor with invalidCursor', () => {
    const text = encodeCursor(cursor, query, 10, key, now);
    const flipped = `${text.slice(0, 20)}${text[20] === 'A' ? 'B' : 'A'}${text.slice(21)}`;
    expect(scimTypeOf(() => decodeCursor(flipped, query, 10, key, now))).toBe('invalidCursor');
    expect(scimTypeOf(() => decodeCursor(text, query, 10, randomBytes(32), now))).toBe('invalidCursor');
    expect(scimTypeOf(() => decodeCursor('eyJ2IjoxfQ', query, 10, key, now))).toBe('invalidCursor');
    expect(scimTypeOf(() => decodeCursor('not a cursor!', query, 10, key, now))).toBe('invalidCursor');
    const otherQuery = queryFingerprint(['User', 'userName pr', 'displayName:false']);
    expect(scimTypeOf(() => decodeCursor(text, otherQuery, 10, key, now))).toBe('invalidCursor');
  });

  it('expire after cursorTimeout with expiredCursor, and refuse another count with invalidCount', () => {
    const text = encodeCursor(cursor, query, 10, key, now);
    const later = new Date(now.getTime() + (CURSOR_TIMEOUT_SECONDS + 1) * 1000);
    expect(scimTypeOf(() => decodeCursor(text, query, 10, key, later))).toBe('expiredCursor');
    expect(scimTypeOf(() => decodeCursor(text, query, 11, key, now))).toBe('invalidCount');
  });
});
