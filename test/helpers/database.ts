// A fresh, migrated database for one test file: a uniquely named schema on TEST_DATABASE_URL (dropped
// afterwards), or a PGlite instance started from the run's migrated snapshot.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { inject } from 'vitest';
import { type Database, openDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';

export const onPostgres = Boolean(process.env.TEST_DATABASE_URL);

export async function createTestDatabase(): Promise<Database> {
  const url = process.env.TEST_DATABASE_URL;
  if (url) {
    const schema = `scimd_test_${randomBytes(6).toString('hex')}`;
    const run = async (statement: string) => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(statement);
      } finally {
        await client.end();
      }
    };
    await run(`create schema ${schema}`);
    const database = await openDatabase({ databaseUrl: url, searchPath: schema, poolSize: 5 });
    const close = async () => {
      await database.close();
      await run(`drop schema ${schema} cascade`);
    };
    try {
      await migrateToLatest(database.db, schema);
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
