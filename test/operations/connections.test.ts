// Connections the server takes away (pg_terminate_backend, as a failover, a PgBouncer or Postgres
// restart, or a managed database's idle timeout does): the process lives, requests caught in the
// middle answer 503 with Retry-After, and the next request succeeds on a new connection.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScratchDatabase, onPostgres, type ScratchDatabase } from '../helpers/database.js';
import { newUser, type RemoteTenant, remote } from '../helpers/remote.js';
import { type ScimdProcess, startScimd } from '../helpers/scimd-process.js';
import { sleep, until } from '../helpers/system.js';

const ADMIN_TOKEN = 'connections-admin-token-0123456789abcdefghij';

let scratch: ScratchDatabase;
let scimd: ScimdProcess;
let tenant: RemoteTenant;

/** Ends every connection to the scratch database but the caller's; returns how many it ended. */
async function terminateConnections(): Promise<number> {
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query(
      `select count(*) filter (where pg_terminate_backend(pid)) as ended
       from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()`,
      [scratch.name],
    );
    return Number(rows[0].ended);
  } finally {
    await client.end();
  }
}

describe.skipIf(!onPostgres)('connections ended by the server', () => {
  beforeAll(async () => {
    scratch = await createScratchDatabase();
    scimd = await startScimd({
      DATABASE_URL: scratch.url,
      SCIMD_ADMIN_TOKEN: ADMIN_TOKEN,
      PUBLIC_URL: 'https://scim.test.example',
    });
    tenant = await remote(scimd.origin, ADMIN_TOKEN).tenant('Connections');
  });
  afterAll(async () => {
    await scimd?.stop();
    await scratch?.drop();
  });

  it('the process lives, and the next request after idle connections are ended succeeds', async () => {
    for (let i = 0; i < 5; i++)
      expect((await tenant.scim('POST', '/Users', newUser(`idle${i}@corp.example`))).status).toBe(201);
    // The pool, the LISTEN connection and the readiness probe all lose their connections.
    expect(await terminateConnections()).toBeGreaterThanOrEqual(2);
    await sleep(200);
    expect(scimd.alive()).toBe(true);
    const list = await tenant.scim('GET', '/Users?filter=userName sw "idle"');
    expect(list.status).toBe(200);
    expect(list.body.totalResults).toBe(5);
    expect((await fetch(`${scimd.origin}/readyz`)).status).toBe(200);
    // Log lines leave within a second (src/log.ts).
    await until(() => /a database connection failed; it is replaced on next use/.test(scimd.output()));
  });

  it('requests caught while their connections are ended answer 503 with Retry-After or succeed, never 500', async () => {
    const statuses: number[] = [];
    const retryAfter: (string | null)[] = [];
    let stop = false;
    const writer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const res = await tenant.scim('POST', '/Users', newUser(`busy-${w}-${i}@corp.example`));
        statuses.push(res.status);
        if (res.status === 503) retryAfter.push(res.headers.get('retry-after'));
      }
    };
    const writers = Array.from({ length: 8 }, (_, w) => writer(w));
    for (let round = 0; round < 5; round++) {
      await sleep(100);
      await terminateConnections();
    }
    await sleep(200);
    stop = true;
    await Promise.all(writers);
    expect(scimd.alive()).toBe(true);
    expect(statuses.length).toBeGreaterThan(20);
    expect(statuses.filter((s) => s !== 201 && s !== 503)).toEqual([]);
    expect(retryAfter.every((v) => v !== null && Number(v) > 0)).toBe(true);
    // Afterwards, everything works again.
    expect((await tenant.scim('POST', '/Users', newUser('after@corp.example'))).status).toBe(201);
  });
});
