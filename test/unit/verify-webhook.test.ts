// verifyWebhook answers only what the signature covers: a captured delivery replayed with another
// delivery id or event header is refused, and the id and type it returns are the signed body's.
import { describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../src/receiver.js';
import { deliveryHeaders, generateWebhookSecret } from '../../src/webhooks/signing.js';

const secret = generateWebhookSecret();
const now = 1_800_000_000;
const body = JSON.stringify({
  id: 'whd_42_abc',
  type: 'user.deactivated',
  timestamp: '2026-11-28T06:00:00.000Z',
  data: { type: 'user.deactivated', resourceId: 'u1' },
});
const headers = deliveryHeaders(secret, { id: 'whd_42_abc', type: 'user.deactivated' }, body, now);

describe('verifyWebhook', () => {
  it('returns the delivery id and type of the signed body, and the delivery itself', () => {
    const check = verifyWebhook(body, headers, secret, { now });
    expect(check).toMatchObject({
      ok: true,
      deliveryId: 'whd_42_abc',
      event: 'user.deactivated',
      timestamp: now,
    });
    expect(check.ok && check.delivery).toEqual(JSON.parse(body));
  });

  it('refuses a replay under a new delivery id, so that dedupe by id holds', () => {
    const replayed = { ...headers, 'x-scimd-delivery-id': 'whd_43_abc' };
    expect(verifyWebhook(body, replayed, secret, { now })).toEqual({
      ok: false,
      reason: 'the delivery headers disagree with the signed body',
    });
  });

  it('refuses a delivery whose event header was changed', () => {
    const retyped = { ...headers, 'x-scimd-event': 'user.created' };
    expect(verifyWebhook(body, retyped, secret, { now }).ok).toBe(false);
  });

  it('needs no unsigned header: without the id and event headers, the body says what it is', () => {
    const { 'x-scimd-delivery-id': _id, 'x-scimd-event': _event, ...signedOnly } = headers;
    expect(verifyWebhook(body, signedOnly, secret, { now })).toMatchObject({
      ok: true,
      deliveryId: 'whd_42_abc',
    });
  });

  it('refuses a signed body that is not a delivery', () => {
    const text = '["not", "a", "delivery"]';
    const signed = deliveryHeaders(secret, { id: 'x', type: 'y' }, text, now);
    expect(verifyWebhook(text, signed, secret, { now })).toEqual({
      ok: false,
      reason: 'the body is not a scimd delivery',
    });
  });
});
