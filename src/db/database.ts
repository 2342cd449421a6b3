import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { lockDataDir } from './pglite-lock.js';
import type { DB } from './tables.js';

export interface Database {
  readonly db: Kysely<DB>;
  readonly kind: 'postgres' | 'pglite';
  /** The schema the tables live in when not the default search path (tests). */
  readonly schema?: string | undefined;
  /** Answers whether the database responds; used by /readyz. */
  ping(): Promise<boolean>;
  /** PGlite only: the data directory as a tarball (tests start from a migrated snapshot). */
  dump?: () => Promise<Blob>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** Postgres connection string; when absent, embedded PGlite is used. */
  databaseUrl?: string | undefined;
  /** Where PGlite keeps its files; `memory://` keeps them in memory (tests). */
  pgliteDir?: string;
  /** A PGlite data directory dump to start from (tests start from a migrated snapshot). */
  pgliteSnapshot?: Blob;
  /** Postgres schema to put on the search path (tests isolate themselves in one). */
  searchPath?: string;
  poolSize?: number;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options);
  return openPglite(options.pgliteDir ?? 'memory://', options.pgliteSnapshot);
}

async function openPostgres(connectionString: string, options: DatabaseOptions): Promise<Database> {
  const pool = new pg.Pool({
    connectionString,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: 10_000,
    ...(options.searchPath ? { options: `-c search_path=${options.searchPath}` } : {}),
  });
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    kind: 'postgres',
    schema: options.searchPath,
    ping: () => ping(db),
    close: () => db.destroy(),
  };
}

async function openPglite(dir: string, snapshot?: Blob): Promise<Database> {
  let unlock = () => {};
  let dataDir: string | undefined;
  if (!dir.startsWith('memory://')) {
    mkdirSync(dir, { recursive: true });
    unlock = lockDataDir(dir);
    dataDir = join(dir, 'pgdata');
  }
  try {
    const pglite = await PGlite.create({
      ...(dataDir ? { dataDir } : {}),
      ...(snapshot ? { loadDataDir: snapshot } : {}),
    });
    // PGlite has one session: the pool must stay at one connection (more corrupts the protocol), and
    // a transaction that touches the outer handle would wait forever without the timeout.
    const pool = new pg.Pool({ ...createPgConfig(pglite), max: 1, connectionTimeoutMillis: 30_000 });
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    return {
      db,
      kind: 'pglite',
      ping: () => ping(db),
      dump: () => pglite.dumpDataDir('gzip'),
      close: async () => {
        await db.destroy();
        await pglite.close();
        unlock();
      },
    };
  } catch (error) {
    unlock();
    throw error;
  }
}

async function ping(db: Kysely<DB>): Promise<boolean> {
  try {
    await db.selectNoFrom((eb) => eb.lit(1).as('one')).execute();
    return true;
  } catch {
    return false;
  }
}
