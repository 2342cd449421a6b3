// The baseline: a bare Koa handler running the indexed userName lookup, nothing else. What scimd's
// own lookup is measured against, on the same database. BASELINE_PREPARED=1 sends it as a named
// prepared statement, as scimd does (src/db/prepared.ts); otherwise as pg's plain pool.query does.

import Koa from 'koa';
import { CompiledQuery } from 'kysely';
import { openDatabase } from '../src/db/database.js';

const database = await openDatabase({
  databaseUrl: process.env.DATABASE_URL || undefined,
  pgliteDir: process.env.DATA_DIR,
  prepare: process.env.BASELINE_PREPARED === '1',
});
const orgId = process.env.BENCH_ORG_ID!;
const app = new Koa();
app.use(async (ctx) => {
  const { rows } = await database.db.executeQuery<{ id: string; data: Record<string, unknown> }>(
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
process.on('SIGTERM', () => server.close(() => database.close().then(() => process.exit(0))));
