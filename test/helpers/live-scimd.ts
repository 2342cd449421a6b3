// scimd serving on a port as `serve()` runs it, on a database of the test's own (a PGlite data
// directory, or a scratch Postgres database on TEST_DATABASE_URL), which a test can stop, start again
// on the same port and database, and reach the database of while it is stopped.
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { databaseOptions, readConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import type { DB } from '../../src/db/tables.js';
import { serve } from '../../src/index.js';
import { createScratchDatabase, onPostgres } from './database.js';

export interface LiveScimd {
  /** `http://127.0.0.1:<port>`, the same across restarts. */
  readonly origin: string;
  readonly adminToken: string;
  /** Stops as SIGTERM does: in-flight requests finish, long polls answer at once, the port closes. */
  stop(): Promise<void>;
  /** Serves again on the same port and database. */
  start(): Promise<void>;
  /** Runs `work` on scimd's database while scimd is stopped (a PGlite directory has one user at a time). */
  offline<T>(work: (db: Kysely<DB>) => Promise<T>): Promise<T>;
  /** Stops it and removes its database. */
  close(): Promise<void>;
}

const ADMIN_TOKEN = 'live-admin-token-0123456789abcdefghijk';

/** scimd on a fresh database, with `env` on top of its settings (WEBHOOKS_ALLOW_PRIVATE, say). */
export async function startLiveScimd(env: Record<string, string> = {}): Promise<LiveScimd> {
  const dataDir = mkdtempSync(join(tmpdir(), 'scimd-live-'));
  const scratch = onPostgres ? await createScratchDatabase() : undefined;
  const settings = {
    HOST: '127.0.0.1',
    PUBLIC_URL: 'http://scimd.test',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    SCIMD_ADMIN_TOKEN: ADMIN_TOKEN,
    ...(scratch ? { DATABASE_URL: scratch.url } : {}),
    ...env,
  };
  let port = 0;
  let running: { stop: () => Promise<void> } | undefined;
  const start = async () => {
    if (running) throw new Error('scimd is already serving');
    const served = await serve(readConfig({ ...settings, PORT: String(port) }));
    port = (served.server.address() as AddressInfo).port;
    running = served;
  };
  const stop = async () => {
    await running?.stop();
    running = undefined;
  };
  await start();
  return {
    origin: `http://127.0.0.1:${port}`,
    adminToken: ADMIN_TOKEN,
    stop,
    start,
    async offline(work) {
      if (running) throw new Error('stop scimd before opening its database');
      const database = await openDatabase(databaseOptions(readConfig(settings)));
      try {
        return await work(database.db);
      } finally {
        await database.close();
      }
    },
    async close() {
      await stop();
      await scratch?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
