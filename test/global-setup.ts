// Builds one migrated PGlite data directory per test run; each test file starts from a copy of it
// (about 1 s) instead of running initdb in WASM (about 5 s). On Postgres there is nothing to prepare.
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { startPgBouncer } from './helpers/pgbouncer.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteSnapshot: string;
    /** With TEST_PGBOUNCER=1: a connection string through PgBouncer, its database name left off. */
    pgbouncerBase: string;
  }
}

export default async function setup(project: TestProject) {
  if (process.env.TEST_DATABASE_URL) {
    project.provide('pgliteSnapshot', '');
    if (process.env.TEST_PGBOUNCER !== '1') {
      project.provide('pgbouncerBase', '');
      return;
    }
    // Every test database is then reached through PgBouncer in transaction mode (.ci/run runs the
    // conformance replays so).
    const bouncer = await startPgBouncer(process.env.TEST_DATABASE_URL);
    project.provide('pgbouncerBase', bouncer.url(''));
    return () => bouncer.stop();
  }
  project.provide('pgbouncerBase', '');
  const snapshotPath = join(tmpdir(), `scimd-test-snapshot-${process.pid}.tar.gz`);
  const database = await openDatabase({ pgliteDir: 'memory://' });
  await migrateToLatest(database.db);
  const dump = await database.dump!();
  writeFileSync(snapshotPath, Buffer.from(await dump.arrayBuffer()));
  await database.close();
  project.provide('pgliteSnapshot', snapshotPath);
  return () => rmSync(snapshotPath, { force: true });
}
