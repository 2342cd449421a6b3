// How deliveries are signed, and how a receiver checks them (src/receiver.ts exports verifyWebhook).
// X-Scimd-Signature: `sha256=` and the lower-case hex HMAC SHA-256 of `<timestamp>.<raw body>`, keyed
// with the endpoint's secret as text. Standard Webhooks (webhook-id, webhook-timestamp,
// webhook-signature): `v1,` and the base64 HMAC SHA-256 of `<id>.<timestamp>.<raw body>`, keyed with
// the base64 part of the same `whsec_…` secret, as that specification's libraries expect.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

export function generateWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

function scimdSignature(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

function standardSignature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(
    secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    'base64',
  );
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The headers of a delivery of `body` (its exact text), signed with `secret`. */
export function deliveryHeaders(
  secret: string,
  delivery: { id: string; type: string },
  body: string,
  timestamp = Math.floor(Date.now() / 1000),
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'scimd-webhooks',
    'x-scimd-signature': scimdSignature(secret, timestamp, body),
    'x-scimd-timestamp': String(timestamp),
    'x-scimd-delivery-id': delivery.id,
    'x-scimd-event': delivery.type,
    'webhook-id': delivery.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': standardSignature(secret, delivery.id, timestamp, body),
  };
}

export interface VerifyOptions {
  /** How far the timestamp may be from now, either way (300 unless given). */
  readonly toleranceSeconds?: number;
  /** Now, in Unix seconds (tests). */
  readonly now?: number;
}

export type Verification =
  | {
      readonly ok: true;
      /** The delivery id, from the signed body (the same on every retry: dedupe by it). */
      readonly deliveryId: string;
      /** The change type, from the signed body. */
      readonly event: string;
      readonly timestamp: number;
      /** The delivery as signed: `{id, type, timestamp, data}`. */
      readonly delivery: {
        readonly id: string;
        readonly type: string;
        readonly timestamp: string;
        readonly data: unknown;
      };
    }
  | { readonly ok: false; readonly reason: string };

type Headers = Record<string, string | string[] | undefined> | { get(name: string): string | null };

function header(headers: Headers, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const record = headers as Record<string, string | string[] | undefined>;
  const value = record[name] ?? record[Object.keys(record).find((k) => k.toLowerCase() === name) ?? ''];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Checks a delivery as received: the signature over the raw body (compared in constant time) and a
 * timestamp within the tolerance. `rawBody` must be the bytes as received, before any JSON parsing.
 * What it returns comes from the signed body only: the X-Scimd-Delivery-Id and X-Scimd-Event headers
 * are not signed, so a delivery whose headers disagree with its body is refused.
 */
export function verifyWebhook(
  rawBody: string | Buffer,
  headers: Headers,
  secret: string,
  options: VerifyOptions = {},
): Verification {
  const signature = header(headers, 'x-scimd-signature');
  const stamp = header(headers, 'x-scimd-timestamp');
  if (!signature || !stamp) return { ok: false, reason: 'missing signature headers' };
  if (!/^\d{1,12}$/.test(stamp)) return { ok: false, reason: 'malformed timestamp' };
  const timestamp = Number(stamp);
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? 300)) {
    return { ok: false, reason: 'timestamp outside the tolerance' };
  }
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  const expected = Buffer.from(
    `sha256=${createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')}`,
  );
  const received = Buffer.from(signature);
  if (expected.length !== received.length || !timingSafeEqual(expected, received)) {
    return { ok: false, reason: 'signature mismatch' };
  }
  const delivery = signedDelivery(body);
  if (!delivery) return { ok: false, reason: 'the body is not a scimd delivery' };
  const claimedId = header(headers, 'x-scimd-delivery-id');
  const claimedEvent = header(headers, 'x-scimd-event');
  if (
    (claimedId !== undefined && claimedId !== delivery.id) ||
    (claimedEvent !== undefined && claimedEvent !== delivery.type)
  ) {
    return { ok: false, reason: 'the delivery headers disagree with the signed body' };
  }
  return { ok: true, deliveryId: delivery.id, event: delivery.type, timestamp, delivery };
}

/** The body's `{id, type, timestamp, data}`, when it is one. */
function signedDelivery(body: Buffer): Extract<Verification, { ok: true }>['delivery'] | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { id, type, timestamp, data } = parsed as Record<string, unknown>;
  if (typeof id !== 'string' || typeof type !== 'string' || typeof timestamp !== 'string') return undefined;
  return { id, type, timestamp, data };
}
