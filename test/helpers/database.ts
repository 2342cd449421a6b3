// A fresh, migrated database for one test file: a uniquely named schema on TEST_DATABASE_URL (dropped
// afterwards), or a PGlite instance started from the run's migrated snapshot.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { inject } from 'vitest';
import { type Database, openDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';

export const onPostgres = Boolean(process.env.TEST_DATABASE_URL);

/** A session-level advisory lock key: held while a test schema is migrated or dropped. */
const SCHEMA_CHANGES_LOCK = 0x5c1d;

export async function createTestDatabase(): Promise<Database> {
  const url = process.env.TEST_DATABASE_URL;
  if (url) {
    const schema = `scimd_test_${randomBytes(6).toString('hex')}`;
    // Kysely's migrator introspects the tables of every schema in the database, calling functions
    // that look each one up by name: a test file dropping its schema at that moment makes another
    // file's migration fail with "schema does not exist". Migrations and drops take turns.
    const client = async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      return c;
    };
    const exclusively = async (work: () => Promise<void>) => {
      const c = await client();
      try {
        await c.query('select pg_advisory_lock($1)', [SCHEMA_CHANGES_LOCK]);
        await work();
      } finally {
        await c.end();
      }
    };
    const run = async (statement: string) => {
      const c = await client();
      try {
        await c.query(statement);
      } finally {
        await c.end();
      }
    };
    await run(`create schema ${schema}`);
    const database = await openDatabase({ databaseUrl: url, searchPath: schema, poolSize: 5 });
    const close = async () => {
      await database.close();
      await exclusively(() => run(`drop schema ${schema} cascade`));
    };
    try {
      await exclusively(async () => {
        await migrateToLatest(database.db, schema);
      });
    } catch (error) {
      await close();
      throw error;
    }
    return { ...database, close };
  }
  const snapshot = inject('pgliteSnapshot');
  const database = await openDatabase({
    pgliteDir: 'memory://',
    pgliteSnapshot: new Blob([readFileSync(snapshot)]),
  });
  await migrateToLatest(database.db);
  return database;
}
