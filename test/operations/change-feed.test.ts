// The change feed across two scimd processes on one database: writes through both, a follower
// reading through one, and a long poll in one woken by a write in the other.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScratchDatabase, onPostgres, type ScratchDatabase } from '../helpers/database.js';
import { proveFeed } from '../helpers/feed-proof.js';
import { newUser, type RemoteTenant, remote } from '../helpers/remote.js';
import { type ScimdProcess, startScimd } from '../helpers/scimd-process.js';

const ADMIN_TOKEN = 'feed-admin-token-0123456789abcdefghij';

describe.skipIf(!onPostgres)('the change feed across two scimd processes', () => {
  let scratch: ScratchDatabase;
  let a: ScimdProcess;
  let b: ScimdProcess;
  const tenants: RemoteTenant[] = [];
  beforeAll(async () => {
    scratch = await createScratchDatabase();
    const env = { DATABASE_URL: scratch.url, SCIMD_ADMIN_TOKEN: ADMIN_TOKEN };
    a = await startScimd(env);
    b = await startScimd(env);
    for (let i = 0; i < 2; i++) tenants.push(await remote(a.origin, ADMIN_TOKEN).tenant(`feed ${i}`));
  }, 120_000);
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await scratch?.drop();
  });

  it('a follower through one process sees exactly what both committed', async () => {
    const processes = [a.origin, b.origin];
    const byOrg = new Map(tenants.map((t) => [t.orgId, t]));
    const { changes } = await proveFeed(
      {
        scim: (orgId, writer, method, path, body) => {
          const t = byOrg.get(orgId)!;
          return remote(processes[writer]!, ADMIN_TOKEN)
            .as(orgId, t.tokenId, t.token)
            .scim(method, path, body);
        },
        changes: (query) => remote(a.origin, ADMIN_TOKEN).admin('GET', `/changes?${query}`),
      },
      { orgIds: tenants.map((t) => t.orgId), concurrency: 24, writesEach: 10, writers: 2 },
    );
    expect(changes).toBeGreaterThan(24 * 10 * 3);
  }, 120_000);

  it('a long poll in one process is answered by a write through the other within a second', async () => {
    const [t] = tenants;
    const end = await remote(a.origin, ADMIN_TOKEN).admin('GET', `/changes?orgId=${t!.orgId}&limit=1000`);
    let after = end.body.nextCursor;
    for (let more = end.body.changes.length; more > 0; ) {
      const page = await remote(a.origin, ADMIN_TOKEN).admin(
        'GET',
        `/changes?orgId=${t!.orgId}&after=${after}&limit=1000`,
      );
      after = page.body.nextCursor;
      more = page.body.changes.length;
    }
    const waiting = remote(a.origin, ADMIN_TOKEN).admin(
      'GET',
      `/changes?orgId=${t!.orgId}&after=${after}&wait=20`,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const written = performance.now();
    const created = await remote(b.origin, ADMIN_TOKEN)
      .as(t!.orgId, t!.tokenId, t!.token)
      .scim('POST', '/Users', newUser('woken@example.com'));
    expect(created.status).toBe(201);
    const res = await waiting;
    const latency = performance.now() - written;
    expect(res.status).toBe(200);
    expect(res.body.changes.map((c: { data: { user_name: string } }) => c.data.user_name)).toEqual([
      'woken@example.com',
    ]);
    // The 1 s recheck alone would take up to a second: NOTIFY is what makes it prompt.
    expect(latency).toBeLessThan(900);
  }, 60_000);
});
