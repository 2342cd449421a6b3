// The baseline: a bare Koa handler running the indexed userName lookup over a plain pg pool (or
// PGlite's pg adapter), nothing else. What scimd's own lookup is measured against, on the same
// database. BASELINE_PREPARED=1 sends it as a named prepared statement, as scimd does
// (src/db/prepared.ts); otherwise as pg's plain pool.query does.
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import Koa from 'koa';
import { CompiledQuery, Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { lockDataDir } from '../src/db/pglite-lock.js';
import { preparingPool } from '../src/db/prepared.js';

const prepared = process.env.BASELINE_PREPARED === '1';
let pool: pg.Pool;
let release = async () => {};
if (process.env.DATABASE_URL) {
  pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
} else {
  const dir = process.env.DATA_DIR!;
  const unlock = lockDataDir(dir);
  const pglite = await PGlite.create({ dataDir: join(dir, 'pgdata') });
  pool = new pg.Pool({ ...createPgConfig(pglite), max: 1 });
  release = async () => {
    await pglite.close();
    unlock();
  };
}
const db = new Kysely({ dialect: new PostgresDialect({ pool: prepared ? preparingPool(pool) : pool }) });
const orgId = process.env.BENCH_ORG_ID!;
const app = new Koa();
app.use(async (ctx) => {
  const { rows } = await db.executeQuery<{ id: string; data: Record<string, unknown> }>(
    CompiledQuery.raw(
      `select id, data, created_at, updated_at from users
       where org_id = $1 and lower(user_name) = lower($2) and deprovisioned_at is null`,
      [orgId, String(ctx.query.userName ?? '')],
    ),
  );
  ctx.type = 'application/json';
  ctx.body = { totalResults: rows.length, Resources: rows.map((r) => ({ id: r.id, ...r.data })) };
});
const server = app.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () =>
  server.close(() =>
    db
      .destroy()
      .then(release)
      .then(() => process.exit(0)),
  ),
);
