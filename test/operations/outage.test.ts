// The database goes away and comes back: a Postgres cluster of the test's own, crashed
// (pg_ctl stop -m immediate) under a write load and started again. While it is down, writes answer
// 503 with Retry-After and /readyz 503; once it is back, scimd recovers by itself (LISTEN included),
// and every write that was answered 2xx is in the database.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../helpers/database.js';
import { type Cluster, canStartCluster, startCluster } from '../helpers/postgres-cluster.js';
import { newUser, type RemoteTenant, remote, revocationHeardAt } from '../helpers/remote.js';
import { type ScimdProcess, startScimd } from '../helpers/scimd-process.js';
import { sleep, until } from '../helpers/system.js';

const ADMIN_TOKEN = 'outage-admin-token-0123456789abcdefghij';

let cluster: Cluster;
let first: ScimdProcess;
let second: ScimdProcess;

interface Attempt {
  readonly userName: string;
  readonly at: number;
  readonly status: number;
  readonly retryAfter: string | null;
  readonly requestId: string | null;
}

/** How many answers of each status each second of the run saw, for the eye. */
function timeline(attempts: readonly Attempt[], start: number): string {
  const seconds = new Map<number, Map<number, number>>();
  for (const a of attempts) {
    const second = Math.floor((a.at - start) / 1000);
    const counts = seconds.get(second) ?? new Map<number, number>();
    counts.set(a.status, (counts.get(a.status) ?? 0) + 1);
    seconds.set(second, counts);
  }
  return [...seconds.entries()]
    .sort(([a], [b]) => a - b)
    .map(([s, counts]) => `${s}s ${[...counts.entries()].map(([status, n]) => `${status}×${n}`).join(' ')}`)
    .join('\n');
}

// Runs where CI runs the Postgres tests and Postgres's binaries are installed (they are in CI).
describe.skipIf(!onPostgres || !canStartCluster)('a database outage', () => {
  beforeAll(async () => {
    cluster = await startCluster();
    const env = {
      DATABASE_URL: cluster.url,
      SCIMD_ADMIN_TOKEN: ADMIN_TOKEN,
      PUBLIC_URL: 'https://scim.test.example',
    };
    first = await startScimd(env);
    second = await startScimd(env);
  }, 120_000);
  afterAll(async () => {
    await first?.stop();
    await second?.stop();
    cluster?.destroy();
  });

  it('answers 503 while the database is down, recovers by itself, and loses no write it answered 2xx', async () => {
    const tenant: RemoteTenant = await remote(first.origin, ADMIN_TOKEN).tenant('Outage');
    const attempts: Attempt[] = [];
    let stop = false;
    let n = 0;
    const writer = async () => {
      while (!stop) {
        const userName = `outage-${n++}@corp.example`;
        try {
          const res = await tenant.scim('POST', '/Users', newUser(userName));
          attempts.push({
            userName,
            at: Date.now(),
            status: res.status,
            retryAfter: res.headers.get('retry-after'),
            requestId: res.headers.get('x-request-id'),
          });
        } catch (error) {
          // The process did not answer at all: what this test exists to rule out.
          attempts.push({ userName, at: Date.now(), status: 0, retryAfter: null, requestId: null });
          throw error;
        }
        await sleep(10);
      }
    };
    const started = Date.now();
    const writers = Array.from({ length: 4 }, () => writer());
    const signedIn = await fetch(`${first.origin}/console/sign-in`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ adminToken: ADMIN_TOKEN }),
      redirect: 'manual',
    });
    expect(signedIn.status).toBe(303);
    const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
    await sleep(1000);

    cluster.stop('immediate');
    const down = Date.now();
    await sleep(2500);
    const ready = await fetch(`${first.origin}/readyz`);
    expect(ready.status).toBe(503);
    const healthy = await fetch(`${first.origin}/healthz`);
    expect(healthy.status).toBe(200);
    const admin = await remote(first.origin, ADMIN_TOKEN).admin('GET', '/orgs');
    expect(admin.status).toBe(503);
    expect(admin.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(admin.body.error.code).toBe('unavailable');
    const page = await fetch(`${first.origin}/console`, { headers: { Cookie: cookie } });
    expect(page.status).toBe(503);
    expect(page.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await page.text()).toContain('The database is unavailable');

    cluster.start();
    const up = Date.now();
    // Recovery: the first 201 after the database is back.
    let recovered: number | undefined;
    while (recovered === undefined && Date.now() - up < 20_000) {
      const late = attempts.filter((a) => a.at > up && a.status === 201);
      if (late.length > 0) recovered = late[0]!.at;
      else await sleep(50);
    }
    await sleep(500);
    stop = true;
    await Promise.all(writers);

    console.log(
      `outage: down at ${((down - started) / 1000).toFixed(1)} s, up at ${((up - started) / 1000).toFixed(1)} s, ` +
        `first 201 ${recovered === undefined ? 'never' : `${recovered - up} ms after start`}\n${timeline(attempts, started)}`,
    );
    expect(first.alive()).toBe(true);
    expect(recovered).toBeDefined();
    expect((await fetch(`${first.origin}/console`, { headers: { Cookie: cookie } })).status).toBe(200);
    const during = attempts.filter((a) => a.at > down + 200 && a.at < up);
    expect(during.length).toBeGreaterThan(0);
    expect(during.every((a) => a.status === 503)).toBe(true);
    expect(attempts.filter((a) => a.status !== 201 && a.status !== 503)).toEqual([]);
    expect(attempts.filter((a) => a.status === 503).every((a) => Number(a.retryAfter) > 0)).toBe(true);

    // Every write answered 201 is in the database.
    const client = new pg.Client({ connectionString: cluster.url });
    await client.connect();
    try {
      const created = attempts.filter((a) => a.status === 201).map((a) => a.userName);
      const { rows } = await client.query('select user_name from users where user_name = any($1)', [created]);
      expect(rows.length).toBe(created.length);
      // A failed write is audited or, when the audit log is what failed, logged with its entry and
      // request id.
      const failed = attempts.filter((a) => a.status === 503);
      const audited = await client.query('select request_id from audit_events where request_id = any($1)', [
        failed.map((a) => a.requestId),
      ]);
      const inAudit = new Set(audited.rows.map((r) => r.request_id as string));
      const logged = () =>
        new Set(
          first
            .output()
            .split('\n')
            .filter((line) => line.includes('could not write an audit entry'))
            .map((line) => JSON.parse(line).requestId as string),
        );
      const unrecorded = () => {
        const lines = logged();
        return failed.filter((a) => !inAudit.has(a.requestId!) && !lines.has(a.requestId!));
      };
      // The process writes its log lines within a second of logging them (src/log.ts).
      await until(() => unrecorded().length === 0, 3000).catch(() => {});
      expect(unrecorded()).toEqual([]);
    } finally {
      await client.end();
    }
  });

  it('hears admin changes again once the database is back: a revocation through one process reaches the other', async () => {
    const tenant = await remote(first.origin, ADMIN_TOKEN).tenant('After the outage');
    expect(await revocationHeardAt(first.origin, second.origin, ADMIN_TOKEN, tenant)).toBeLessThan(3000);
  });
});
