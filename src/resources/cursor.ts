// RFC 9865 cursors: opaque, URL-safe, sealed (AES-256-GCM) with the organization's key, so a client
// can neither read nor forge one. A cursor names the query it
// belongs to (resource type, filter, sort), the page size, the row it continues from and the way it
// reads; anything else the client sends with it is refused with the scimType RFC 9865 §5 defines.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { ExpiredCursorError, InvalidCountError, InvalidCursorError } from '../http/scim-errors.js';

/** RFC 9865 cursorTimeout: a cursor stays valid this long. Cursors hold no server state. */
export const CURSOR_TIMEOUT_SECONDS = 86_400;

export interface CursorPosition {
  /** The sort key of the row the page continues from, as text (null sorts last ascending). */
  readonly value: string | null;
  readonly id: string;
}

export interface Cursor {
  /** next: rows after `position`; previous: rows before it. */
  readonly direction: 'next' | 'previous';
  readonly position: CursorPosition;
}

interface Payload {
  v: 1;
  d: 'n' | 'p';
  k: [string | null, string];
  q: string;
  c: number;
  t: number;
}

/** Fingerprint of what must stay the same from page to page. */
export function queryFingerprint(parts: readonly (string | undefined)[]): string {
  return createHash('sha256')
    .update(JSON.stringify(parts.map((p) => p ?? null)))
    .digest('base64url')
    .slice(0, 16);
}

function seal(key: Buffer, payload: Payload): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(payload), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

function open(key: Buffer, text: string): unknown {
  const raw = /^[\w-]+$/.test(text) ? Buffer.from(text, 'base64url') : Buffer.alloc(0);
  if (raw.length < 29) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    const plain = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]);
    return JSON.parse(plain.toString('utf8'));
  } catch {
    // A wrong key (another organization's cursor) or any change to the text fails authentication.
    return undefined;
  }
}

export function encodeCursor(cursor: Cursor, query: string, count: number, key: Buffer, now: Date): string {
  const payload: Payload = {
    v: 1,
    d: cursor.direction === 'next' ? 'n' : 'p',
    k: [cursor.position.value, cursor.position.id],
    q: query,
    c: count,
    t: Math.floor(now.getTime() / 1000),
  };
  return seal(key, payload);
}

function isPayload(value: unknown): value is Payload {
  const p = value as Payload;
  return (
    typeof p === 'object' &&
    p !== null &&
    p.v === 1 &&
    (p.d === 'n' || p.d === 'p') &&
    Array.isArray(p.k) &&
    p.k.length === 2 &&
    (p.k[0] === null || typeof p.k[0] === 'string') &&
    typeof p.k[1] === 'string' &&
    typeof p.q === 'string' &&
    Number.isInteger(p.c) &&
    Number.isInteger(p.t)
  );
}

export function decodeCursor(text: string, query: string, count: number, key: Buffer, now: Date): Cursor {
  const payload = open(key, text);
  if (!isPayload(payload)) {
    throw new InvalidCursorError(
      'The cursor is not valid here: send an empty cursor for the first page, then the nextCursor or previousCursor of a response',
    );
  }
  if (payload.q !== query) {
    throw new InvalidCursorError(
      'The cursor belongs to another query: filter and sort must stay the same between pages',
    );
  }
  if (now.getTime() / 1000 - payload.t > CURSOR_TIMEOUT_SECONDS) {
    throw new ExpiredCursorError(
      `The cursor has expired: cursors are valid for ${CURSOR_TIMEOUT_SECONDS} seconds`,
    );
  }
  if (payload.c !== count) {
    throw new InvalidCountError(`count must stay ${payload.c}, the count of the first page of this query`);
  }
  return {
    direction: payload.d === 'n' ? 'next' : 'previous',
    position: { value: payload.k[0], id: payload.k[1] },
  };
}
