// Deliveries to a real HTTP receiver on loopback: signed so that a receiver can check them by hand,
// with a Standard Webhooks library and with verifyWebhook; retried; in order per resource while
// others go in parallel; stopped and resumed without loss.
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../src/receiver.js';
import { SecretBox } from '../../src/webhooks/secret-box.js';
import { type Harness, type Tenant, useHarness } from '../helpers/harness.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { patchOp, USER } from '../helpers/scim.js';

let harness: Harness;
useHarness(
  (h) => {
    harness = h;
  },
  { webhooks: { retryDelaysMs: [50, 100, 150] } },
);

let receiver: Receiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

async function setUp(
  events: string[] = ['user.created', 'user.updated', 'user.deactivated', 'user.reactivated'],
) {
  receiver = await startReceiver();
  const org = await harness.createOrg({ name: 'Hooked', groupSync: true });
  const t: Tenant = await harness.tenantOf(org.id, await harness.createToken(org.id));
  const created = await harness
    .admin('post', '/webhooks')
    .send({ url: receiver.url, events, orgId: org.id })
    .expect(201);
  return { t, receiver, id: created.body.id as string, secret: created.body.secret as string };
}

// A wave records what it sent once every request of it is answered, so the log may trail the receiver.
async function recorded(
  id: string,
  done: (deliveries: Delivery[]) => boolean,
): Promise<{ deliveries: Delivery[] }> {
  let log = { deliveries: [] as Delivery[] };
  await expect
    .poll(async () => {
      log = (await harness.admin('get', `/webhooks/${id}/deliveries`).expect(200)).body;
      return done(log.deliveries);
    })
    .toBe(true);
  return log;
}
type Delivery = { position: string; state: string } & Record<string, unknown>;

const user = (userName: string) => ({ schemas: [USER], userName, active: true });

describe('webhook deliveries', () => {
  it('are signed: by hand, with a Standard Webhooks library, and with verifyWebhook', async () => {
    const { t, receiver, id, secret } = await setUp();
    const userId = (await t.post('/Users', user('signed@example.com')).expect(201)).body.id;
    await receiver.waitFor((r) => r.length === 1);
    const [got] = receiver.received;
    const h = got!.headers;
    expect(got!.body).toMatchObject({
      type: 'user.created',
      data: {
        type: 'user.created',
        orgId: t.orgId,
        resourceId: userId,
        data: { user_name: 'signed@example.com' },
      },
    });
    expect(got!.body.id).toBe(h['x-scimd-delivery-id']);
    expect(Date.parse(got!.body.timestamp)).not.toBeNaN();
    expect(h['x-scimd-event']).toBe('user.created');
    expect(h['webhook-id']).toBe(h['x-scimd-delivery-id']);
    expect(h['webhook-timestamp']).toBe(h['x-scimd-timestamp']);
    expect(Math.abs(Number(h['x-scimd-timestamp']) - Date.now() / 1000)).toBeLessThan(30);

    // The product document's rule, computed here: HMAC SHA-256 of `<timestamp>.<raw body>`.
    const expected = createHmac('sha256', secret)
      .update(`${h['x-scimd-timestamp']}.${got!.rawBody}`)
      .digest('hex');
    expect(h['x-scimd-signature']).toBe(`sha256=${expected}`);
    // A Standard Webhooks library, given the same secret.
    const verified = new Webhook(secret).verify(got!.rawBody, h as Record<string, string>);
    expect(verified).toMatchObject({ type: 'user.created' });
    // The receiver's helper scimd exports.
    expect(verifyWebhook(got!.rawBody, h, secret)).toMatchObject({
      ok: true,
      deliveryId: h['x-scimd-delivery-id'],
    });
    expect(verifyWebhook(`${got!.rawBody} `, h, secret)).toEqual({ ok: false, reason: 'signature mismatch' });
    expect(verifyWebhook(got!.rawBody, h, `${secret}x`)).toEqual({ ok: false, reason: 'signature mismatch' });
    expect(verifyWebhook(got!.rawBody, h, secret, { now: Number(h['x-scimd-timestamp']) + 301 })).toEqual({
      ok: false,
      reason: 'timestamp outside the tolerance',
    });
    expect(verifyWebhook(got!.rawBody, { ...h, 'x-scimd-signature': undefined }, secret).ok).toBe(false);

    const log = await recorded(id, (d) => d[0]?.state === 'delivered');
    expect(log.deliveries).toEqual([
      expect.objectContaining({
        type: 'user.created',
        resourceId: userId,
        state: 'delivered',
        attempts: 1,
        lastStatus: 200,
        lastError: null,
        nextAttemptAt: null,
      }),
    ]);
    expect(JSON.stringify(log)).not.toContain(secret);
  });

  it('are retried after 503 and 429 (waiting as Retry-After says), with the same delivery id', async () => {
    const { t, receiver, id } = await setUp();
    let calls = 0;
    receiver.answer = () => {
      calls++;
      if (calls === 1) return { status: 503 };
      if (calls === 2) return { status: 429, headers: { 'Retry-After': '1' } };
      return { status: 204 };
    };
    await t.post('/Users', user('retried@example.com')).expect(201);
    await receiver.waitFor((r) => r.length === 3);
    const [first, second, third] = receiver.received;
    expect(new Set([first, second, third].map((r) => r!.headers['x-scimd-delivery-id'])).size).toBe(1);
    expect(third!.startedAt - second!.endedAt).toBeGreaterThanOrEqual(900);
    const { deliveries } = await recorded(id, (d) => d[0]?.state === 'delivered');
    expect(deliveries[0]).toMatchObject({ state: 'delivered', attempts: 3, lastStatus: 204 });
  });

  describe('after a change to the endpoint returns', () => {
    /** Holds every request at the receiver until released; resolves once `n` are held. */
    function hold(target: Receiver) {
      let release = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      target.answer = () => ({ status: 200, until: gate });
      return { release: () => release() };
    }
    const CONCURRENCY = 8; // the harness's dispatcher
    /** 30 users, sent in one wave once the endpoint is active again: CONCURRENCY of them in flight. */
    async function createWhileInactive(id: string, tenant: Tenant, prefix: string) {
      await harness.admin('patch', `/webhooks/${id}`).send({ active: false }).expect(200);
      for (let n = 0; n < 30; n++) await tenant.post('/Users', user(`${prefix}${n}@example.com`)).expect(201);
      await harness.admin('patch', `/webhooks/${id}`).send({ active: true }).expect(200);
    }

    it('nothing is signed with the old secret: requests in flight are cut off, the rest re-signed', async () => {
      const { t, receiver, id, secret } = await setUp(['user.created']);
      const gate = hold(receiver);
      await createWhileInactive(id, t, 'rotated');
      await receiver.waitFor(() => receiver.arrived.length === CONCURRENCY);
      const rotated = await harness.admin('post', `/webhooks/${id}/rotate-secret`).send({}).expect(200);
      const heldBefore = receiver.arrived.length;
      gate.release();
      const verifiesWith = (key: string) => (r: (typeof receiver.arrived)[number]) =>
        verifyWebhook(r.rawBody, r.headers, key).ok;
      await receiver.waitFor(
        () =>
          new Set(receiver.arrived.filter(verifiesWith(rotated.body.secret)).map((r) => r.body.id)).size ===
          30,
      );
      expect(heldBefore).toBe(CONCURRENCY);
      expect(receiver.arrived.slice(0, heldBefore).every(verifiesWith(secret))).toBe(true);
      // Every request that arrived after the rotation answered is signed with the new secret.
      expect(receiver.arrived.slice(heldBefore).filter(verifiesWith(secret))).toEqual([]);
    });

    it('nothing more goes to the old URL', async () => {
      const { t, receiver: old, id } = await setUp(['user.created']);
      const gate = hold(old);
      const next = await startReceiver();
      try {
        await createWhileInactive(id, t, 'moved');
        await old.waitFor(() => old.arrived.length === CONCURRENCY);
        await harness.admin('patch', `/webhooks/${id}`).send({ url: next.url }).expect(200);
        gate.release();
        await next.waitFor(() => new Set(next.arrived.map((r) => r.body.id)).size === 30);
        expect(old.arrived).toHaveLength(CONCURRENCY);
      } finally {
        await next.close();
      }
    });
  });

  it('keep each resource in order while different resources go in parallel', async () => {
    const { t, receiver } = await setUp();
    receiver.answer = () => ({ status: 200, delayMs: 5 + Math.floor(Math.random() * 40) });
    const ids: string[] = [];
    for (let i = 0; i < 6; i++)
      ids.push((await t.post('/Users', user(`order-${i}@example.com`)).expect(201)).body.id);
    await Promise.all(
      ids.map(async (id) => {
        for (let n = 1; n <= 5; n++) {
          await t
            .patch(`/Users/${id}`, patchOp({ op: 'replace', path: 'title', value: `t${n}` }))
            .expect(200);
        }
      }),
    );
    await receiver.waitFor((r) => r.length === 36, 30_000);
    for (const id of ids) {
      const mine = receiver.received.filter((r) => r.body.data.resourceId === id);
      expect(mine.map((r) => r.body.data.data.title ?? 'created')).toEqual([
        'created',
        't1',
        't2',
        't3',
        't4',
        't5',
      ]);
      // Never two of one resource at once: each began after the one before had its answer.
      for (let i = 1; i < mine.length; i++)
        expect(mine[i]!.startedAt).toBeGreaterThanOrEqual(mine[i - 1]!.endedAt);
    }
    expect(receiver.maxInFlight()).toBeGreaterThan(1);
  });

  it('are held while inactive, kept while disabled by failures, and all sent when active again', async () => {
    const { t, receiver, id } = await setUp();
    await harness.admin('patch', `/webhooks/${id}`).send({ active: false }).expect(200);
    await t.post('/Users', user('held-1@example.com')).expect(201);
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(receiver.received).toHaveLength(0);

    // Failing for good: disabled once the retries (3 here) are spent.
    receiver.answer = () => ({ status: 500 });
    await harness.admin('patch', `/webhooks/${id}`).send({ active: true }).expect(200);
    await receiver.waitFor((r) => r.length === 4);
    await expect
      .poll(async () => (await harness.admin('get', `/webhooks/${id}`)).body.state, { timeout: 5000 })
      .toBe('disabled');
    const disabled = (await harness.admin('get', `/webhooks/${id}`)).body;
    expect(disabled.disabledReason).toMatch(/failed 4 times.*500/);
    await t.post('/Users', user('held-2@example.com')).expect(201);
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(receiver.received).toHaveLength(4);

    receiver.answer = () => ({ status: 200 });
    await harness.admin('patch', `/webhooks/${id}`).send({ active: true }).expect(200);
    await receiver.waitFor(
      (r) => r.filter((x) => x.body.data.data.user_name === 'held-2@example.com').length === 1,
    );
    const names = receiver.received.slice(4).map((r) => r.body.data.data.user_name);
    expect(names).toEqual(['held-1@example.com', 'held-2@example.com']);
  });

  it('stop when the receiver answers 410 Gone', async () => {
    const { t, receiver, id } = await setUp();
    receiver.answer = () => ({ status: 410 });
    await t.post('/Users', user('gone@example.com')).expect(201);
    await receiver.waitFor((r) => r.length === 1);
    await expect
      .poll(async () => (await harness.admin('get', `/webhooks/${id}`)).body.disabledReason, {
        timeout: 5000,
      })
      .toMatch(/410/);
    const pending = await harness.admin('get', `/webhooks/${id}/deliveries?state=pending`).expect(200);
    expect(pending.body.deliveries).toHaveLength(1);
  });

  it('carry only the subscribed types of the endpoint’s organization; redeliver and ping on demand', async () => {
    const { t, receiver, id } = await setUp(['user.deactivated']);
    const other = await harness.tenant();
    const mine = (await t.post('/Users', user('scoped@example.com')).expect(201)).body.id;
    const theirs = (await other.post('/Users', user('other@example.com')).expect(201)).body.id;
    await other
      .patch(`/Users/${theirs}`, patchOp({ op: 'replace', path: 'active', value: false }))
      .expect(200);
    await t.patch(`/Users/${mine}`, patchOp({ op: 'replace', path: 'active', value: false })).expect(200);
    await receiver.waitFor((r) => r.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received.map((r) => [r.body.type, r.body.data.resourceId])).toEqual([
      ['user.deactivated', mine],
    ]);

    const position = (await recorded(id, (d) => d.length === 1)).deliveries[0]!.position;
    await harness.admin('post', `/webhooks/${id}/deliveries/${position}/redeliver`).send({}).expect(200);
    await receiver.waitFor((r) => r.length === 2);
    expect(receiver.received[1]!.headers['x-scimd-delivery-id']).toBe(
      receiver.received[0]!.headers['x-scimd-delivery-id'],
    );

    const pinged = await harness.admin('post', `/webhooks/${id}/ping`).send({}).expect(200);
    expect(pinged.body).toMatchObject({ delivered: true, status: 200, error: null });
    expect(receiver.received[2]!.body).toMatchObject({ type: 'webhook.ping', data: { webhookId: id } });
  });

  it('disable an endpoint whose secret the key cannot open, saying to rotate it', async () => {
    const { receiver, id, t } = await setUp();
    await harness.database.db
      .updateTable('webhook_endpoints')
      .set({ secret_box: new SecretBox('another key').seal('whsec_x') })
      .where('id', '=', id)
      .execute();
    await t.post('/Users', user('sealed@example.com')).expect(201);
    await expect
      .poll(async () => (await harness.admin('get', `/webhooks/${id}`)).body.disabledReason, {
        timeout: 5000,
      })
      .toMatch(/rotate the secret/);
    expect(receiver.received).toHaveLength(0);
  });
});
