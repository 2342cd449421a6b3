import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { lockDataDir } from './pglite-lock.js';
import { preparingPool } from './prepared.js';
import type { DB } from './tables.js';

export interface Database {
  readonly db: Kysely<DB>;
  readonly kind: 'postgres' | 'pglite';
  /** The schema the tables live in when not the default search path (tests). */
  readonly schema?: string | undefined;
  /** Answers whether the database responds; used by /readyz. */
  ping(): Promise<boolean>;
  /**
   * Postgres only (PGlite serves one process): calls `onMessage` with the payload of each NOTIFY on
   * `channel`, from a connection of its own that reconnects after a second when lost. `onGap` is
   * called whenever messages may have been missed: on losing the connection ('lost') and on
   * listening ('listening'), the first time and again after a loss.
   * Returns what stops listening.
   */
  listen?: (
    channel: string,
    onMessage: (payload: string) => void,
    onGap: (why: GapReason) => void,
  ) => Listening;
  /** PGlite only: the data directory as a tarball (tests start from a migrated snapshot). */
  dump?: () => Promise<Blob>;
  close(): Promise<void>;
}

export type GapReason = 'lost' | 'listening';

export interface Listening {
  /** Resolves once the first LISTEN is in place (or has failed; it is retried). */
  readonly ready: Promise<void>;
  stop(): Promise<void>;
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
  /** Send parameterized queries as named prepared statements (prepared.ts); on unless false. */
  prepare?: boolean;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options);
  return openPglite(options.pgliteDir ?? 'memory://', options.pgliteSnapshot, options.prepare);
}

async function openPostgres(connectionString: string, options: DatabaseOptions): Promise<Database> {
  const pool = new pg.Pool({
    connectionString,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: 10_000,
    ...(options.searchPath ? { options: `-c search_path=${options.searchPath}` } : {}),
  });
  const db = new Kysely<DB>({ dialect: dialect(pool, options.prepare) });
  return {
    db,
    kind: 'postgres',
    schema: options.searchPath,
    ping: () => ping(db),
    listen: (channel, onMessage, onGap) => listen(connectionString, channel, onMessage, onGap),
    close: () => db.destroy(),
  };
}

const RELISTEN_DELAY_MS = 1_000;

function listen(
  connectionString: string,
  channel: string,
  onMessage: (payload: string) => void,
  onGap: (why: GapReason) => void,
): Listening {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`not a plain channel name: ${channel}`);
  let current: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let stopped = false;
  const connect = async (): Promise<void> => {
    const client = new pg.Client({ connectionString });
    current = client;
    client.on('notification', (message) => {
      if (message.channel === channel) onMessage(message.payload ?? '');
    });
    client.on('error', () => {}); // 'end' follows; it reconnects.
    client.on('end', () => {
      if (current !== client) return;
      current = undefined;
      onGap('lost');
      if (!stopped) retry = setTimeout(connect, RELISTEN_DELAY_MS);
    });
    try {
      await client.connect();
      await client.query(`listen ${channel}`);
      onGap('listening');
    } catch {
      // Whichever of this and 'end' comes first schedules the retry.
      if (current === client) {
        current = undefined;
        if (!stopped) retry = setTimeout(connect, RELISTEN_DELAY_MS);
      }
      await client.end().catch(() => {});
    }
  };
  const ready = connect();
  return {
    ready,
    stop: async () => {
      stopped = true;
      clearTimeout(retry);
      const client = current;
      current = undefined;
      await client?.end().catch(() => {});
    },
  };
}

function dialect(pool: pg.Pool, prepare = true): PostgresDialect {
  return new PostgresDialect({ pool: prepare ? preparingPool(pool) : pool });
}

async function openPglite(dir: string, snapshot?: Blob, prepare?: boolean): Promise<Database> {
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
    const db = new Kysely<DB>({ dialect: dialect(pool, prepare) });
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
