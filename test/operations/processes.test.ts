// Several scimd processes on one Postgres database, as behind a load balancer: each accepts the same
// admin token (SCIMD_ADMIN_TOKEN, required on Postgres), and an admin change made through one is
// enforced by the others at once.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScratchDatabase, onPostgres, type ScratchDatabase } from '../helpers/database.js';
import { remote, revocationHeardAt } from '../helpers/remote.js';
import { type ScimdProcess, startScimd } from '../helpers/scimd-process.js';

const ADMIN_TOKEN = 'processes-admin-token-0123456789abcdefghij';

describe.skipIf(!onPostgres)('several scimd processes on one database', () => {
  let scratch: ScratchDatabase;
  let a: ScimdProcess;
  let b: ScimdProcess;
  beforeAll(async () => {
    scratch = await createScratchDatabase();
    const env = { DATABASE_URL: scratch.url, SCIMD_ADMIN_TOKEN: ADMIN_TOKEN };
    a = await startScimd(env);
    b = await startScimd(env);
  }, 120_000);
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await scratch?.drop();
  });

  it('refuses to start on Postgres without SCIMD_ADMIN_TOKEN, saying why', () => {
    const started = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        "const { main } = await import('./src/index.ts'); await main();",
      ],
      {
        env: { ...process.env, DATABASE_URL: scratch.url, SCIMD_ADMIN_TOKEN: '', PORT: '0' },
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    expect(started.status).toBe(1);
    expect(started.stderr).toMatch(/SCIMD_ADMIN_TOKEN must be set when DATABASE_URL is/);
  });

  it('warns at start when PUBLIC_URL is not set', () => {
    expect(a.output()).toMatch(/PUBLIC_URL is not set/);
  });

  it('accepts the same admin token in every process, and enforces a revocation made through another at once', async () => {
    const tenant = await remote(a.origin, ADMIN_TOKEN).tenant('Two processes');
    expect((await remote(b.origin, ADMIN_TOKEN).admin('GET', `/orgs/${tenant.orgId}`)).status).toBe(200);
    expect(await revocationHeardAt(a.origin, b.origin, ADMIN_TOKEN, tenant)).toBeLessThan(3000);
  });
});
