// Webhooks across processes: scimd killed with SIGKILL in the middle of deliveries loses no change,
// and two processes on one database never send one delivery at the same moment.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScratchDatabase, onPostgres, type ScratchDatabase } from '../helpers/database.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { newUser, remote } from '../helpers/remote.js';
import { type ScimdProcess, startScimd } from '../helpers/scimd-process.js';

const ADMIN_TOKEN = 'webhooks-admin-token-0123456789abcdefghij';

describe.skipIf(!onPostgres)('webhooks across scimd processes', () => {
  let scratch: ScratchDatabase;
  let receiver: Receiver;
  const env = () => ({
    DATABASE_URL: scratch.url,
    SCIMD_ADMIN_TOKEN: ADMIN_TOKEN,
    WEBHOOKS_ALLOW_PRIVATE: 'true',
    WEBHOOK_RETRY_DELAYS: '100ms,200ms,300ms,400ms,500ms',
    WEBHOOK_TIMEOUT_MS: '2000',
  });
  beforeAll(async () => {
    scratch = await createScratchDatabase();
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await scratch?.drop();
  });

  it('loses no change when scimd is killed with SIGKILL mid-delivery', async () => {
    let first: ScimdProcess | undefined = await startScimd(env());
    let second: ScimdProcess | undefined;
    try {
      const tenant = await remote(first.origin, ADMIN_TOKEN).tenant('Killed');
      const hook = await remote(first.origin, ADMIN_TOKEN).admin('POST', '/webhooks', {
        url: receiver.url,
        events: ['user.created'],
        orgId: tenant.orgId,
      });
      expect(hook.status).toBe(201);
      // A slow receiver, so that deliveries are in flight when the process dies.
      receiver.answer = () => ({ status: 200, delayMs: 100 });
      const names: string[] = [];
      for (let i = 0; i < 40; i++) {
        const name = `killed-${i}@example.com`;
        names.push(name);
        expect((await tenant.scim('POST', '/Users', newUser(name))).status).toBe(201);
      }
      await receiver.waitFor((r) => r.length >= 3);
      first.child.kill('SIGKILL');
      await first.stop();
      first = undefined;
      receiver.answer = () => ({ status: 200 });
      second = await startScimd(env());
      // The killed process's lease lapses (30 s at most), and the new one delivers the rest.
      await receiver.waitFor(
        (r) => names.every((n) => r.some((x) => x.body?.data?.data?.user_name === n)),
        60_000,
      );
      const delivered = new Set(receiver.received.map((r) => r.body.data.data.user_name));
      expect([...delivered].sort()).toEqual([...names].sort());
    } finally {
      await first?.stop();
      await second?.stop();
    }
  }, 120_000);

  it('two processes never send one delivery at the same moment, and send every one', async () => {
    receiver.received.length = 0;
    const a = await startScimd(env());
    const b = await startScimd(env());
    try {
      const tenant = await remote(a.origin, ADMIN_TOKEN).tenant('Two');
      const hooks = [];
      for (let i = 0; i < 4; i++) {
        const hook = await remote(b.origin, ADMIN_TOKEN).admin('POST', '/webhooks', {
          url: `${receiver.url}/${i}`,
          events: ['user.created', 'user.updated'],
          orgId: tenant.orgId,
        });
        expect(hook.status).toBe(201);
        hooks.push(hook.body.id);
      }
      const inFlight = new Map<string, number>();
      let overlaps = 0;
      receiver.answer = (request) => {
        const id = request.headers['x-scimd-delivery-id'] as string;
        if (inFlight.has(id)) overlaps++;
        inFlight.set(id, Date.now());
        setTimeout(() => inFlight.delete(id), 30);
        return { status: 200, delayMs: 25 };
      };
      const processes = [a.origin, b.origin];
      await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          remote(processes[i % 2]!, ADMIN_TOKEN)
            .as(tenant.orgId, tenant.tokenId, tenant.token, processes[i % 2])
            .scim('POST', '/Users', newUser(`two-${i}@example.com`)),
        ),
      );
      await receiver.waitFor((r) => r.length >= 30 * hooks.length, 60_000);
      expect(overlaps).toBe(0);
      const perHook = new Map<string, Set<string>>();
      for (const r of receiver.received) {
        const key = r.headers['x-scimd-delivery-id'] as string;
        const hook = key.split('_')[2]!;
        if (!perHook.has(hook)) perHook.set(hook, new Set());
        perHook.get(hook)!.add(r.body.data.data.user_name);
      }
      expect(perHook.size).toBe(hooks.length);
      for (const names of perHook.values()) expect(names.size).toBe(30);
    } finally {
      await a.stop();
      await b.stop();
    }
  }, 120_000);
});
