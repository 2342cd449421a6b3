// scimd behind PgBouncer (Debian's 1.18) in transaction mode, where every statement may land on a
// different server connection: the pooler mode (DATABASE_PREPARED_STATEMENTS=false) sends unnamed
// statements and no connection settings, LISTEN and migrations use DATABASE_DIRECT_URL, and what
// cannot work through the pooler fails at start with a message that names the setting to use.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseSetupError, openDatabase } from '../../src/db/database.js';
import { createScratchDatabase, onPostgres, type ScratchDatabase } from '../helpers/database.js';
import { canStartPgBouncer, type PgBouncer, startPgBouncer } from '../helpers/pgbouncer.js';
import { newUser, type RemoteTenant, remote, revocationHeardAt } from '../helpers/remote.js';
import { GROUP, PATCH_OP } from '../helpers/scim.js';
import { type ScimdProcess, startScimd } from '../helpers/scimd-process.js';

const ADMIN_TOKEN = 'pgbouncer-admin-token-0123456789abcdefghij';

let bouncer: PgBouncer;
/** The database scimd runs on, with a statement time limit of its own. */
let scratch: ScratchDatabase;
let pooled: string;
/** A database without one. */
let bare: ScratchDatabase;
const processes: ScimdProcess[] = [];

async function onScratch(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: scratch.url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

describe.skipIf(!onPostgres || !canStartPgBouncer)('behind PgBouncer in transaction mode', () => {
  beforeAll(async () => {
    scratch = await createScratchDatabase();
    bare = await createScratchDatabase();
    // The limit a transaction pooler cannot carry per connection, given to the database instead
    // (before PgBouncer opens a server connection to it: a setting applies to new sessions).
    await onScratch(`alter database ${scratch.name} set statement_timeout = '15s'`);
    bouncer = await startPgBouncer(process.env.TEST_DATABASE_URL!);
    pooled = bouncer.url(scratch.name);
  });
  afterAll(async () => {
    for (const p of processes) await p.stop();
    await bouncer?.stop();
    await scratch?.drop();
    await bare?.drop();
  });

  it('refuses to start without the pooler mode, naming PgBouncer and the settings to use', async () => {
    const attempt = openDatabase({ databaseUrl: pooled });
    await expect(attempt).rejects.toBeInstanceOf(DatabaseSetupError);
    await expect(attempt).rejects.toThrow(
      /PgBouncer.*DATABASE_PREPARED_STATEMENTS=false.*DATABASE_DIRECT_URL/s,
    );
    // Without the statement time limit it connects, and the pooler is recognised by what it does.
    const unlimited = openDatabase({ databaseUrl: pooled, statementTimeoutMs: 0 });
    await expect(unlimited).rejects.toThrow(
      /transaction pooler, where named prepared statements cannot work.*DATABASE_PREPARED_STATEMENTS=false/s,
    );
  });

  it('refuses the pooler mode while the database role has no statement time limit, and says how to give it one', async () => {
    const attempt = openDatabase({ databaseUrl: bouncer.url(bare.name), prepare: false });
    await expect(attempt).rejects.toBeInstanceOf(DatabaseSetupError);
    await expect(attempt).rejects.toThrow(/ALTER ROLE .* SET statement_timeout/);
    // Without a limit, on purpose, it starts.
    const database = await openDatabase({
      databaseUrl: bouncer.url(bare.name),
      prepare: false,
      statementTimeoutMs: 0,
    });
    await database.close();
  });

  describe('in the pooler mode', () => {
    let tenant: RemoteTenant;
    const env = () => ({
      DATABASE_URL: pooled,
      DATABASE_DIRECT_URL: scratch.url,
      DATABASE_PREPARED_STATEMENTS: 'false',
      SCIMD_ADMIN_TOKEN: ADMIN_TOKEN,
      PUBLIC_URL: 'https://scim.test.example',
    });

    beforeAll(async () => {
      processes.push(await startScimd(env()));
      // A second process starts on the same database, through the same pooler.
      processes.push(await startScimd(env()));
      tenant = await remote(processes[0]!.origin, ADMIN_TOKEN).tenant('Pooled');
    }, 120_000);

    it('serves concurrent writes from two processes without a 5xx, and stores them all', async () => {
      const [a, b] = processes;
      const admin = remote(a!.origin, ADMIN_TOKEN);
      const there = [
        admin.as(tenant.orgId, tenant.tokenId, tenant.token),
        admin.as(tenant.orgId, tenant.tokenId, tenant.token, b!.origin),
      ];
      const group = await there[0]!.scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Pooled' });
      expect(group.status).toBe(201);
      const statuses: number[] = [];
      const client = async (c: number) => {
        const at = there[c % 2]!;
        for (let i = 0; i < 15; i++) {
          const created = await at.scim('POST', '/Users', newUser(`pooled-${c}-${i}@corp.example`));
          statuses.push(created.status);
          const id = created.body.id as string;
          statuses.push(
            (
              await at.scim('PATCH', `/Users/${id}`, {
                schemas: [PATCH_OP],
                Operations: [{ op: 'replace', path: 'title', value: `t${i}` }],
              })
            ).status,
          );
          statuses.push(
            (
              await at.scim('PATCH', `/Groups/${group.body.id}`, {
                schemas: [PATCH_OP],
                Operations: [{ op: 'add', path: 'members', value: [{ value: id }] }],
              })
            ).status,
          );
          statuses.push(
            (await at.scim('GET', `/Users?filter=userName eq "pooled-${c}-${i}@corp.example"`)).status,
          );
        }
      };
      await Promise.all(Array.from({ length: 8 }, (_, c) => client(c)));
      expect(statuses.filter((s) => s >= 500)).toEqual([]);
      const members = await there[1]!.scim('GET', `/Groups/${group.body.id}`);
      expect(members.body.members).toHaveLength(8 * 15);
      const titled = await there[0]!.scim('GET', '/Users?filter=title pr&count=1');
      expect(titled.body.totalResults).toBe(8 * 15);
    });

    it('answers /readyz through the pooler', async () => {
      expect((await fetch(`${processes[1]!.origin}/readyz`)).status).toBe(200);
    });

    it('hears admin changes over the direct connection: a revocation through one process reaches the other at once', async () => {
      const [a, b] = processes;
      const revoking = await remote(a!.origin, ADMIN_TOKEN).tenant('Revoking');
      expect(await revocationHeardAt(a!.origin, b!.origin, ADMIN_TOKEN, revoking)).toBeLessThan(3000);
    });

    it('without DATABASE_DIRECT_URL, starts and says that admin changes reach other processes by expiry only', async () => {
      const { DATABASE_DIRECT_URL: _, ...withoutDirect } = env();
      const alone = await startScimd(withoutDirect);
      processes.push(alone);
      expect(alone.output()).toMatch(/no direct database connection to LISTEN on \(DATABASE_DIRECT_URL\)/);
      expect(await alone.stop()).toBe(0);
    });
  });
});
