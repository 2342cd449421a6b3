import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient } from 'kysely';
import pg from 'pg';
import { FairShare } from './fair-share.js';
import { HealthProbe } from './health.js';
import { migrateToLatest } from './migrate.js';
import { lockDataDir } from './pglite-lock.js';
import { preparingPool } from './prepared.js';
import type { DB } from './tables.js';

export interface Database {
  /** Work of no organization (the admin API, the audit writer), in a share of its own. */
  readonly db: Kysely<DB>;
  /**
   * The same database within the organization's share of the pool (fair-share.ts): every query of a
   * request under the organization's SCIM base URL goes through it.
   */
  forOrg(orgId: string): Kysely<DB>;
  readonly share: FairShare;
  readonly kind: 'postgres' | 'pglite';
  /** The schema the tables live in when not the default search path (tests). */
  readonly schema?: string | undefined;
  /** Whether this process can reach the database (/readyz), on a connection outside the pool. */
  ping(): Promise<boolean>;
  /**
   * Postgres only (PGlite serves one process), and only with a direct connection (DATABASE_URL, or
   * DATABASE_DIRECT_URL behind a transaction pooler): calls `onMessage` with the payload of each
   * NOTIFY on `channel`, from a connection of its own that reconnects after a second when lost.
   * `onGap` is called whenever messages may have been missed: on losing the connection ('lost') and
   * on listening ('listening'), the first time and again after a loss. Returns what stops listening.
   */
  listen?: (
    channel: string,
    onMessage: (payload: string) => void,
    onGap: (why: GapReason) => void,
  ) => Listening;
  /** Applies pending migrations on a connection without the statement time limit; returns their names. */
  migrate(): Promise<string[]>;
  /** PGlite only: the data directory as a tarball (tests start from a migrated snapshot). */
  dump?: () => Promise<Blob>;
  close(): Promise<void>;
}

type GapReason = 'lost' | 'listening';

export interface Listening {
  /** Resolves once the first LISTEN is in place (or has failed; it is retried). */
  readonly ready: Promise<void>;
  stop(): Promise<void>;
}

export interface DatabaseOptions {
  /** Postgres connection string; when absent, embedded PGlite is used. */
  databaseUrl?: string | undefined;
  /**
   * A direct connection to the same database, for LISTEN and migrations, when `databaseUrl` goes
   * through a transaction pooler.
   */
  directUrl?: string | undefined;
  /** Where PGlite keeps its files; `memory://` keeps them in memory (tests). */
  pgliteDir?: string;
  /** A PGlite data directory dump to start from (tests start from a migrated snapshot). */
  pgliteSnapshot?: Blob;
  /** Postgres schema to put on the search path (tests isolate themselves in one). */
  searchPath?: string;
  /** Connections in the pool (Postgres; PGlite has one). */
  poolSize?: number;
  /** Connections one organization may hold at once; three quarters of the pool unless given. */
  poolPerOrg?: number;
  /** How long a request may wait for a connection before it is refused (503). */
  poolWaitMs?: number;
  /** Every statement's time limit in milliseconds; 0 for none. */
  statementTimeoutMs?: number;
  /**
   * Send parameterized queries as named prepared statements (prepared.ts); on unless false. Off is
   * the mode for a transaction pooler (PgBouncer): unnamed statements and no connection settings.
   */
  prepare?: boolean;
  /** Told of errors on connections that no query is waiting on (a server closing idle connections). */
  onConnectionError?: (error: Error) => void;
  /** How the connections name themselves in pg_stat_activity ('scimd' unless given). */
  applicationName?: string;
}

export const DEFAULT_POOL_SIZE = 10;
export const DEFAULT_POOL_WAIT_MS = 5_000;
export const DEFAULT_STATEMENT_TIMEOUT_MS = 15_000;
const CONNECT_TIMEOUT_MS = 5_000;
/** Organizations whose pool view is kept; past this, the least recently created is rebuilt on use. */
const MAX_ORG_VIEWS = 10_000;
/** The share of work that belongs to no organization. */
const SYSTEM = '';

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options);
  return openPglite(options.pgliteDir ?? 'memory://', options);
}

/**
 * Kysely instances over one pool, each within one organization's share: a connection is taken only
 * once the share admits it, and given back to the share with the connection.
 */
function sharedViews(source: PostgresPool, share: FairShare) {
  const view = (org: string, end: () => Promise<void>): Kysely<DB> => {
    // One lease per pooled connection, so Kysely recognises a connection it has seen before.
    const leases = new WeakMap<PostgresPoolClient, PostgresPoolClient>();
    const pool: PostgresPool = {
      connect: async () => {
        await share.enter(org);
        let client: PostgresPoolClient;
        try {
          client = await source.connect();
        } catch (error) {
          share.leave(org);
          throw error;
        }
        let lease = leases.get(client);
        if (!lease) {
          lease = {
            query: client.query.bind(client) as PostgresPoolClient['query'],
            release: () => {
              client.release();
              share.leave(org);
            },
          };
          leases.set(client, lease);
        }
        return lease;
      },
      end,
    };
    return new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  };
  const system = view(SYSTEM, () => source.end());
  const orgs = new Map<string, Kysely<DB>>();
  const forOrg = (orgId: string): Kysely<DB> => {
    let db = orgs.get(orgId);
    if (!db) {
      if (orgs.size >= MAX_ORG_VIEWS) orgs.delete(orgs.keys().next().value!);
      // Only the system view ends the pool.
      db = view(orgId, async () => {});
      orgs.set(orgId, db);
    }
    return db;
  };
  return { system, forOrg };
}

function poolShare(options: DatabaseOptions, size: number): FairShare {
  return new FairShare({
    size,
    // Enough for one organization's burst of writes, leaving a quarter of the pool to the others.
    perOrg: Math.min(size, options.poolPerOrg ?? Math.max(1, Math.floor((size * 3) / 4))),
    waitMs: options.poolWaitMs ?? DEFAULT_POOL_WAIT_MS,
  });
}

async function openPostgres(connectionString: string, options: DatabaseOptions): Promise<Database> {
  const prepare = options.prepare !== false;
  const timeout = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  const size = options.poolSize ?? DEFAULT_POOL_SIZE;
  const pool = new pg.Pool({
    connectionString,
    max: size,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
    application_name: options.applicationName ?? 'scimd',
    // Connection settings travel in the startup message, which a transaction pooler cannot carry to
    // the server connection each statement lands on: in that mode the role must hold the limit.
    ...(prepare && timeout > 0
      ? { statement_timeout: timeout, idle_in_transaction_session_timeout: timeout }
      : {}),
    ...(options.searchPath ? { options: `-c search_path=${options.searchPath}` } : {}),
  });
  // A connection the server closes (a restart, a failover, an idle timeout, pg_terminate_backend)
  // emits 'error': on the pool while idle, on the client while checked out. Unheard, either ends
  // the process; heard, the connection is dropped and the next request gets a new one.
  const onError = (error: Error) => options.onConnectionError?.(error);
  pool.on('error', onError);
  pool.on('connect', (client) => client.on('error', onError));

  const share = poolShare(options, size);
  const { system, forOrg } = sharedViews(prepare ? preparingPool(pool) : pool, share);
  const health = new HealthProbe({ connectionString, application_name: options.applicationName ?? 'scimd' });
  const listenUrl = options.directUrl ?? (prepare ? connectionString : undefined);
  try {
    await checkConnection(pool, { prepare, timeout });
  } catch (error) {
    await system.destroy();
    throw error;
  }
  return {
    db: system,
    forOrg,
    share,
    kind: 'postgres',
    schema: options.searchPath,
    ping: () => health.ping(),
    ...(listenUrl
      ? { listen: (channel, onMessage, onGap) => listen(listenUrl, channel, onMessage, onGap) }
      : {}),
    migrate: () => migrateOnce(options.directUrl ?? connectionString, options.searchPath),
    close: async () => {
      await health.close();
      await system.destroy();
    },
  };
}

/** Thrown at start when the database cannot be used as configured; the message says what to set. */
export class DatabaseSetupError extends Error {}

const PGBOUNCER_ADVICE =
  'Behind PgBouncer in transaction mode set DATABASE_PREPARED_STATEMENTS=false and DATABASE_DIRECT_URL ' +
  'to a direct connection (see "PgBouncer" in the README).';

/**
 * The first statements, at start: they fail here, with a message naming the setting to use, when
 * DATABASE_URL goes through PgBouncer without the pooler mode, or when the pooler mode has no
 * statement time limit to rely on.
 */
async function checkConnection(pool: pg.Pool, mode: { prepare: boolean; timeout: number }): Promise<void> {
  let first: pg.PoolClient;
  try {
    first = await pool.connect();
  } catch (error) {
    if (/unsupported startup parameter/i.test((error as Error).message)) {
      throw new DatabaseSetupError(
        `DATABASE_URL refused scimd's connection settings (${(error as Error).message}): it looks like PgBouncer. ${PGBOUNCER_ADVICE}`,
      );
    }
    throw error;
  }
  try {
    if (mode.prepare && pool.options.max > 1 && (await sharesServerConnections(pool, first))) {
      throw new DatabaseSetupError(
        `DATABASE_URL goes through a transaction pooler, where named prepared statements cannot work. ${PGBOUNCER_ADVICE}`,
      );
    }
    const { rows } = await first.query<{ setting: string }>(
      `select setting from pg_settings where name = 'statement_timeout'`,
    );
    if (!mode.prepare && mode.timeout > 0 && Number(rows[0]?.setting ?? 0) === 0) {
      throw new DatabaseSetupError(
        'DATABASE_PREPARED_STATEMENTS=false (the mode for PgBouncer in transaction mode) cannot send the ' +
          "statement time limit with each connection, and the database role has none. Give the role one: ALTER ROLE <user> SET statement_timeout = '15s' " +
          "(or set it in PgBouncer's connect_query), or set DATABASE_STATEMENT_TIMEOUT_MS=0 to run without one.",
      );
    }
  } finally {
    first.release();
  }
}

/**
 * Whether two connections of the pool are served by the same server session over time, as behind a
 * transaction pooler: while one connection holds a transaction open, the other's session changes
 * (or the holder got the session the other had a moment before). On a real connection neither can
 * happen.
 */
async function sharesServerConnections(pool: pg.Pool, a: pg.PoolClient): Promise<boolean> {
  const pid = async (client: pg.PoolClient) =>
    (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  const b = await pool.connect();
  try {
    const before = await pid(a);
    await b.query('begin');
    const held = await pid(b);
    const after = await pid(a);
    await b.query('rollback');
    return held === before || after !== before;
  } finally {
    b.release();
  }
}

/** Migrates on a connection of its own, without the pool's statement time limit. */
async function migrateOnce(connectionString: string, searchPath: string | undefined): Promise<string[]> {
  const pool = new pg.Pool({
    connectionString,
    max: 1,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    application_name: 'scimd migrate',
    ...(searchPath ? { options: `-c search_path=${searchPath}` } : {}),
  });
  pool.on('error', () => {});
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  try {
    return await migrateToLatest(db, searchPath);
  } finally {
    await db.destroy();
  }
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
    const client = new pg.Client({
      connectionString,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
      application_name: 'scimd listen',
    });
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

async function openPglite(dir: string, options: DatabaseOptions): Promise<Database> {
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
      ...(options.pgliteSnapshot ? { loadDataDir: options.pgliteSnapshot } : {}),
    });
    // PGlite has one session: the pool must stay at one connection (more corrupts the protocol).
    // The fair share turns it among the organizations waiting for it.
    const pool = new pg.Pool({ ...createPgConfig(pglite), max: 1 });
    const share = poolShare({ ...options, poolPerOrg: 1 }, 1);
    const { system, forOrg } = sharedViews(options.prepare === false ? pool : preparingPool(pool), share);
    return {
      db: system,
      forOrg,
      share,
      kind: 'pglite',
      // In the process itself: reachable while open, whatever the pool is doing.
      ping: async () => !pglite.closed,
      migrate: () => migrateToLatest(system),
      dump: () => pglite.dumpDataDir('gzip'),
      close: async () => {
        await system.destroy();
        await pglite.close();
        unlock();
      },
    };
  } catch (error) {
    unlock();
    throw error;
  }
}
