// scimd warns at start when Postgres will not vacuum and analyze its tables by itself: the server's
// autovacuum off, or a table's autovacuum_enabled off.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { autovacuumWarning } from '../../src/db/autovacuum.js';
import { openDatabase } from '../../src/db/database.js';
import { createScratchDatabase, onPostgres, type ScratchDatabase } from '../helpers/database.js';
import { type ScimdProcess, startScimd } from '../helpers/scimd-process.js';

describe('the warning', () => {
  it('names the server, the tables, or both; nothing when autovacuum runs everywhere', () => {
    expect(autovacuumWarning({ server: false, tables: [] })).toBeUndefined();
    expect(autovacuumWarning({ server: true, tables: [] })).toMatch(
      /^autovacuum is off for the Postgres server \(autovacuum = off\): .*VACUUM ANALYZE/,
    );
    expect(autovacuumWarning({ server: true, tables: ['changes', 'users'] })).toMatch(
      /for the Postgres server \(autovacuum = off\) and tables changes, users \(autovacuum_enabled = false\)/,
    );
  });
});

describe.skipIf(!onPostgres)('scimd started on a database with autovacuum off for a table', () => {
  let scratch: ScratchDatabase;
  let scimd: ScimdProcess | undefined;
  let serverOff: boolean;
  beforeAll(async () => {
    scratch = await createScratchDatabase();
    // Migrated first, so the table exists to turn its autovacuum off before scimd starts.
    const database = await openDatabase({ databaseUrl: scratch.url });
    await database.migrate();
    await database.close();
    const client = new pg.Client({ connectionString: scratch.url });
    await client.connect();
    await client.query('alter table users set (autovacuum_enabled = false)');
    serverOff = (await client.query<{ autovacuum: string }>('show autovacuum')).rows[0]!.autovacuum === 'off';
    await client.end();
    scimd = await startScimd({
      DATABASE_URL: scratch.url,
      SCIMD_ADMIN_TOKEN: 'autovacuum-admin-token-0123456789abcdefghij',
    });
  }, 120_000);
  afterAll(async () => {
    await scimd?.stop();
    await scratch?.drop();
  });

  it('warns once, naming the table, and the server when its autovacuum is off too', () => {
    const warnings = scimd!
      .output()
      .split('\n')
      .filter((line) => line.includes('autovacuum is off'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('"level":40');
    expect(warnings[0]).toContain('tables users (autovacuum_enabled = false)');
    expect(warnings[0]!.includes('the Postgres server (autovacuum = off)')).toBe(serverOff);
  });
});
