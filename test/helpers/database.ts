// A fresh, migrated database for one test file: a uniquely named schema on TEST_DATABASE_URL (dropped
// afterwards), or a PGlite instance started from the run's migrated snapshot.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { inject } from 'vitest';
import { type Database, type DatabaseOptions, openDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';

export const onPostgres = Boolean(process.env.TEST_DATABASE_URL);

/** A session-level advisory lock key: held while a test schema is migrated or dropped. */
const SCHEMA_CHANGES_LOCK = 0x5c1d;

/**
 * Runs `work` while no test file's migration runs (on Postgres). Kysely's migrator introspects the
 * tables of every schema in the database, calling functions that look each one up by name: a schema
 * dropped or a table renamed at that moment makes another file's migration fail with "does not
 * exist". Migrations and schema drops take turns.
 */
async function apartFromMigrations<T>(work: () => Promise<T>): Promise<T> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) return work();
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query('select pg_advisory_lock($1)', [SCHEMA_CHANGES_LOCK]);
    return await work();
  } finally {
    await c.end();
  }
}

/** `options` tune the pool and limits (DatabaseOptions); where and which database stay the helper's. */
export async function createTestDatabase(
  options: Pick<DatabaseOptions, 'poolSize' | 'poolPerOrg' | 'poolWaitMs' | 'statementTimeoutMs'> = {},
): Promise<Database> {
  const url = process.env.TEST_DATABASE_URL;
  const pgbouncer = inject('pgbouncerBase');
  if (url && pgbouncer) return createPooledTestDatabase(pgbouncer, options);
  if (url) {
    const schema = `scimd_test_${randomBytes(6).toString('hex')}`;
    const run = async (statement: string) => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        await c.query(statement);
      } finally {
        await c.end();
      }
    };
    await run(`create schema ${schema}`);
    const database = await openDatabase({
      databaseUrl: url,
      searchPath: schema,
      poolSize: 5,
      // Tests that cut connections find this file's by name.
      applicationName: schema,
      ...options,
    });
    const close = async () => {
      await database.close();
      await apartFromMigrations(async () => {
        await run(`drop schema ${schema} cascade`);
        // The read model's views (migrations/…_change-feed.ts) live in a schema beside it.
        await run(`drop schema if exists ${schema}_directory cascade`);
      });
    };
    try {
      await apartFromMigrations(async () => {
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
    ...options,
  });
  await migrateToLatest(database.db);
  return database;
}

export interface ScratchDatabase {
  /** A connection string to the new database. */
  readonly url: string;
  readonly name: string;
  drop(): Promise<void>;
}

/**
 * A whole database of its own on the server of `serverUrl` (TEST_DATABASE_URL unless given), for
 * what a schema cannot isolate: other processes, PgBouncer, database-level settings.
 */
export async function createScratchDatabase(
  serverUrl = process.env.TEST_DATABASE_URL!,
): Promise<ScratchDatabase> {
  const name = `scimd_test_${randomBytes(6).toString('hex')}`;
  const admin = async (statement: string) => {
    const c = new pg.Client({ connectionString: serverUrl });
    await c.connect();
    try {
      await c.query(statement);
    } finally {
      await c.end();
    }
  };
  await admin(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () => admin(`drop database if exists ${name} with (force)`),
  };
}

/**
 * A database of its own reached through PgBouncer in transaction mode (TEST_PGBOUNCER=1), in the
 * pooler mode, migrated over the direct connection, with the statement time limit on the database.
 */
async function createPooledTestDatabase(
  pgbouncerBase: string,
  options: Parameters<typeof createTestDatabase>[0],
): Promise<Database> {
  const scratch = await createScratchDatabase();
  const direct = new pg.Client({ connectionString: scratch.url });
  await direct.connect();
  try {
    await direct.query(`alter database ${scratch.name} set statement_timeout = '15s'`);
  } finally {
    await direct.end();
  }
  const database = await openDatabase({
    databaseUrl: pgbouncerBase + scratch.name,
    directUrl: scratch.url,
    prepare: false,
    poolSize: 5,
    ...options,
  });
  await database.migrate();
  return {
    ...database,
    close: async () => {
      await database.close();
      await scratch.drop();
    },
  };
}
