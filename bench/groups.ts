// Groups at scale: PATCH adding one member to a 100,000-member group vs a 10-member group, and GET of
// the big group with excludedAttributes=members vs an empty group. Prints figures; asserts nothing.
// Runs on BENCH_DATABASE_URL (Postgres) or embedded PGlite. Sizes: BENCH_MEMBERS (default 100000).

import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import pg from 'pg';
import { pino } from 'pino';
import { createApp } from '../src/app.js';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';

const MEMBERS = Number(process.env.BENCH_MEMBERS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 200);
const url = process.env.BENCH_DATABASE_URL;
const schema = `scimd_bench_${randomBytes(4).toString('hex')}`;

async function main() {
  try {
    await run();
  } finally {
    if (url) {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      await c.query(`drop schema if exists ${schema} cascade`);
      await c.end();
    }
  }
}

async function run() {
  if (url) {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(`create schema ${schema}`);
    await c.end();
  }
  const database = await openDatabase(
    url ? { databaseUrl: url, searchPath: schema } : { pgliteDir: 'memory://' },
  );
  await migrateToLatest(database.db, url ? schema : undefined);
  const adminToken = 'bench-admin-token';
  const app = createApp({
    db: database.db,
    ping: database.ping,
    publicUrl: 'http://127.0.0.1',
    adminToken,
    logger: pino({ level: 'silent' }),
  });
  const server = app.listen(0, '127.0.0.1');
  // Seeding can outlast the default 5 s keep-alive; a reused socket must not be closed under us.
  server.keepAliveTimeout = 600_000;
  await new Promise((r) => server.once('listening', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const call = async (method: string, path: string, token: string, body?: unknown) => {
    const res = await fetch(base + path, {
      method,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };

  const org = await call('POST', '/admin/v1/orgs', adminToken, { name: 'bench', groupSync: true });
  const token = (await call('POST', `/admin/v1/orgs/${org.id}/tokens`, adminToken, {})).token as string;
  const scim = `/scim/v2/${org.id}`;
  const started = performance.now();
  await sql`
    insert into users (org_id, id, user_name, active, data, created_at, updated_at)
    select ${org.id}::uuid, gen_random_uuid(), 'user' || i, true, jsonb_build_object('userName', 'user' || i, 'active', true),
           now() - (i || ' ms')::interval, now()
    from generate_series(1, ${MEMBERS + ROUNDS + 10}) as i`.execute(database.db);
  const ids = (
    await sql<{
      id: string;
    }>`select id from users where org_id = ${org.id}::uuid order by created_at desc`.execute(database.db)
  ).rows.map((r) => r.id);
  const big = await call('POST', `${scim}/Groups?excludedAttributes=members`, token, { displayName: 'big' });
  const small = await call('POST', `${scim}/Groups?excludedAttributes=members`, token, {
    displayName: 'small',
    members: ids.slice(0, 10).map((value) => ({ value })),
  });
  const empty = await call('POST', `${scim}/Groups?excludedAttributes=members`, token, {
    displayName: 'empty',
  });
  await sql`insert into group_members (org_id, group_id, user_id, created_at)
            select ${org.id}::uuid, ${big.id}::uuid, id, now() from users where org_id = ${org.id}::uuid
            order by created_at desc limit ${MEMBERS}`.execute(database.db);
  await sql`analyze`.execute(database.db);
  console.log(
    `seeded ${MEMBERS} users and members in ${((performance.now() - started) / 1000).toFixed(1)} s (${database.kind})`,
  );

  const spare = ids.slice(MEMBERS, MEMBERS + ROUNDS);
  const op = (o: string, value: string) => ({
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations:
      o === 'add'
        ? [{ op: 'add', path: 'members', value: [{ value }] }]
        : [{ op: 'remove', path: `members[value eq "${value}"]` }],
  });
  async function timeAdd(groupId: string): Promise<number[]> {
    const times: number[] = [];
    for (const value of spare) {
      const t0 = performance.now();
      await call('PATCH', `${scim}/Groups/${groupId}`, token, op('add', value));
      times.push(performance.now() - t0);
      await call('PATCH', `${scim}/Groups/${groupId}`, token, op('remove', value));
    }
    return times;
  }
  async function timeGet(groupId: string): Promise<number[]> {
    const times: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const t0 = performance.now();
      await call('GET', `${scim}/Groups/${groupId}?excludedAttributes=members`, token);
      times.push(performance.now() - t0);
    }
    return times;
  }
  const stats = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return { p50: s[Math.floor(s.length / 2)]!, p95: s[Math.floor(s.length * 0.95)]! };
  };
  // Warm both paths once, then measure.
  await timeAdd(small.id);
  const rows = [
    ['PATCH add 1 member, 10-member group', stats(await timeAdd(small.id))],
    [`PATCH add 1 member, ${MEMBERS}-member group`, stats(await timeAdd(big.id))],
    ['GET empty group, excludedAttributes=members', stats(await timeGet(empty.id))],
    [`GET ${MEMBERS}-member group, excludedAttributes=members`, stats(await timeGet(big.id))],
  ] as const;
  console.log(`\n${ROUNDS} sequential requests each, ${database.kind}, loopback`);
  console.log('scenario'.padEnd(58), 'p50 ms'.padStart(8), 'p95 ms'.padStart(8));
  for (const [name, s] of rows)
    console.log(name.padEnd(58), s.p50.toFixed(2).padStart(8), s.p95.toFixed(2).padStart(8));
  console.log(`\nratio big/small PATCH (p50): ${(rows[1][1].p50 / rows[0][1].p50).toFixed(2)}  (target < 2)`);
  console.log(`ratio big/empty GET (p50):   ${(rows[3][1].p50 / rows[2][1].p50).toFixed(2)}  (target < 2)`);

  server.close();
  await database.close();
}

await main();
