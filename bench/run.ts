// npm run bench: scimd as a child process on BENCH_DATABASE_URL (Postgres) or embedded PGlite, an
// organization seeded in SQL, load from autocannon over loopback, one table of figures (and
// bench/results/latest.json). It prints; it asserts nothing.
//
// BENCH_USERS (100000), BENCH_DURATION seconds per scenario (8), BENCH_CONNECTIONS (10), BENCH_ROUNDS (5):
// the lookup, POST and the baselines run in turns, this many times, and each ratio with a target is
// the median of the rounds' ratios.
// BENCH_ONLY=<regex> runs only the scenarios whose names match (the ratios needing others print n/a);
// BENCH_PROFILE=<dir> writes a V8 CPU profile of each server process there (--cpu-prof).
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import pg from 'pg';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { recountOrg } from '../src/resources/counts.repository.js';
import { type Seeded, seed } from './seed.js';

const USERS = Number(process.env.BENCH_USERS ?? 100_000);
const DURATION = Number(process.env.BENCH_DURATION ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const WARM_UP = Number(process.env.BENCH_WARM_UP ?? 3);
const ROUNDS = Math.max(1, Math.floor(Number(process.env.BENCH_ROUNDS ?? 5)) || 5);
const SPARE = 20_000;
/** Users seeded in the writes organization for DELETE to remove. */
const DOOMED = 60_000;
const ADMIN_TOKEN = `bench-${randomBytes(8).toString('hex')}`;
const pgUrl = process.env.BENCH_DATABASE_URL;
const ONLY = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY, 'i') : undefined;
const PROFILE = process.env.BENCH_PROFILE;

interface Row {
  scenario: string;
  requestsPerSecond: number;
  p50: number;
  /** Mean latency in ms: the latency ratios use it, since a fast scenario's p50 rounds to 0 ms. */
  meanMs: number;
  p99: number;
  errors: number;
  peakRssMb: number;
  /** Server CPU time per request (user + system): what the load costs the server, whatever the noise. */
  cpuMsPerRequest: number;
  /** Postgres CPU time per request, all its processes on this machine (none on PGlite). */
  dbCpuMsPerRequest: number | undefined;
  /** The organization's users when the scenario started (scimd's scenarios only). */
  users: number | undefined;
}

const perRequestMs = (seconds: number, requests: number) =>
  Math.round((seconds * 1000 * 1000) / Math.max(1, requests)) / 1000;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

/** CPU seconds (user + system) the process has used so far; clock ticks are 1/100 s on Linux. */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** CPU seconds of every Postgres process on this machine (on PGlite the database is the server's). */
function postgresCpuSeconds(): number {
  if (!pgUrl) return 0;
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres')
        total += cpuSeconds(Number(entry));
    } catch {
      // The process ended while being read.
    }
  }
  return total;
}

function rssMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

async function waitReady(origin: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`${origin}/readyz`)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server at ${origin} never became ready`);
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

async function start(
  command: string[],
  env: Record<string, string>,
): Promise<{ child: ChildProcess; origin: string }> {
  const port = await freePort();
  const profile =
    PROFILE === 'perf' ? ['--perf-basic-prof'] : PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE}`] : [];
  const child = spawn(process.execPath, [...profile, ...command], {
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const origin = `http://127.0.0.1:${port}`;
  await waitReady(origin);
  return { child, origin };
}

type Setup = (request: {
  path: string;
  method?: string;
  body?: string;
  headers?: Record<string, string>;
}) => unknown;

/** Unrecorded load first, so the JIT has compiled the hot paths before anything is measured. */
async function warmUp(origin: string, token: string, setupRequest: Setup): Promise<void> {
  await autocannon({
    url: origin,
    connections: CONNECTIONS,
    duration: WARM_UP,
    headers: { authorization: `Bearer ${token}` },
    requests: [{ setupRequest: setupRequest as never }],
  });
}

/** The organization's users, as scimd counts them for totalResults. */
async function countUsers(origin: string, token: string, base: string): Promise<number> {
  const res = await fetch(`${origin}${base}/Users?count=0`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return ((await res.json()) as { totalResults: number }).totalResults;
}

/** Where the bench's database is: a Postgres URL, or PGlite's directory. */
type Place = { databaseUrl?: string; pgliteDir?: string };

/** Removes the users POST /Users created (userNames starting `new-`) and their audit, recounts, vacuums. */
async function removeCreatedUsers(place: Place, orgId: string): Promise<void> {
  const database = await openDatabase({ ...place, statementTimeoutMs: 0 });
  try {
    await sql`delete from users where org_id = ${orgId} and user_name like 'new-%'`.execute(database.db);
    await sql`delete from audit_events where org_id = ${orgId} and action = 'user.create'`.execute(
      database.db,
    );
    await recountOrg(database.db, orgId);
    await sql`vacuum analyze users, audit_events`.execute(database.db);
  } finally {
    await database.close();
  }
}

async function load(
  name: string,
  origin: string,
  pid: number,
  token: string,
  setupRequest: Setup,
  options: { connections?: number; base?: string } = {},
): Promise<Row | undefined> {
  if (ONLY && !ONLY.test(name)) return undefined;
  const users = options.base === undefined ? undefined : await countUsers(origin, token, options.base);
  let peak = rssMb(pid);
  const cpuBefore = cpuSeconds(pid);
  const dbCpuBefore = postgresCpuSeconds();
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(pid));
  }, 100);
  const result = await autocannon({
    url: origin,
    connections: options.connections ?? CONNECTIONS,
    duration: DURATION,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' },
    requests: [{ setupRequest: setupRequest as never }],
  });
  clearInterval(sampler);
  const cpu = cpuSeconds(pid) - cpuBefore;
  const dbCpu = postgresCpuSeconds() - dbCpuBefore;
  const row: Row = {
    scenario: name,
    requestsPerSecond: Math.round(result.requests.average),
    p50: result.latency.p50,
    meanMs: result.latency.mean,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
    peakRssMb: Math.round(peak),
    cpuMsPerRequest: perRequestMs(cpu, result.requests.total),
    dbCpuMsPerRequest: pgUrl ? perRequestMs(dbCpu, result.requests.total) : undefined,
    users,
  };
  console.log(
    `${name.padEnd(52)} ${String(row.requestsPerSecond).padStart(7)} req/s${users === undefined ? '' : ` on ${users} users`}  p50 ${row.p50} ms  p99 ${row.p99} ms  errors ${row.errors}  rss ${row.peakRssMb} MB  cpu ${row.cpuMsPerRequest} ms/req${row.dbCpuMsPerRequest === undefined ? '' : `  postgres ${row.dbCpuMsPerRequest} ms/req`}`,
  );
  return row;
}

const pick = <T>(items: readonly T[]) => items[Math.floor(Math.random() * items.length)]!;
/** The middle value; of an even count, the lower of the two middle ones. */
const median = (values: readonly number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!;

const SCIMD = 'dist/src/index.js';
const LOOKUP = 'GET /Users?filter=userName eq (random user)';
const CREATE = 'POST /Users';
const BASELINES = [
  { name: 'baseline: bare Koa + pg, the same userName lookup', prepared: '0' },
  { name: 'baseline, as a named prepared statement', prepared: '1' },
] as const;
/** Scenarios with a target against the lookup's rate, and against POST /Users'. */
const VERSUS_LOOKUP = [
  'GET /Users page of 100, first page',
  `GET /Users page of 100, startIndex ${Math.max(1, USERS - 9_999)}`,
];
const VERSUS_POST = [
  'PATCH /Users/{id} (active toggle)',
  'PUT /Users/{id}',
  'DELETE /Users/{id} (deactivate)',
  'POST /Groups',
  `PATCH add 1 member, ${USERS}-member group`,
];
const patchBody = (Operations: unknown[]) =>
  JSON.stringify({ schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations });

async function main(): Promise<void> {
  const started = performance.now();
  let databaseUrl: string | undefined;
  let dataDir: string | undefined;
  let dropDatabase = async () => {};
  if (pgUrl) {
    const name = `scimd_bench_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: pgUrl });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    const url = new URL(pgUrl);
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
    dropDatabase = async () => {
      const c = new pg.Client({ connectionString: pgUrl });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    };
  } else {
    dataDir = mkdtempSync(join(tmpdir(), 'scimd-bench-'));
  }
  try {
    // Seeding is one long statement: no time limit.
    const place: Place = { databaseUrl, pgliteDir: dataDir };
    const database = await openDatabase({ ...place, statementTimeoutMs: 0 });
    await migrateToLatest(database.db);
    const seeded: Seeded = await seed(database.db, USERS, SPARE, DOOMED);
    await database.close();
    console.log(
      `seeded ${USERS} users (+${SPARE} spare) and a ${USERS}-member group on ${pgUrl ? 'Postgres' : 'PGlite'} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    const env = {
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : { DATA_DIR: dataDir!, DATABASE_URL: '' }),
      SCIMD_ADMIN_TOKEN: ADMIN_TOKEN,
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
      BENCH_ORG_ID: seeded.orgId,
    };
    const comparison = await compareLookup(seeded, env, place);
    const { rows, walk } = await runScenarios(seeded, env);
    printAndSave(comparison, rows, walk, performance.now() - started);
  } finally {
    await dropDatabase();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

interface Comparison {
  /** Each scenario's median round (by req/s). */
  rows: Row[];
  /** Medians over the rounds of ratios of req/s measured in the same round. */
  lookupVsBaseline: number | undefined;
  lookupVsPreparedBaseline: number | undefined;
  createVsLookup: number | undefined;
  rounds: Row[][];
}

type Request = { path: string; method?: string; body?: string };

/** A POST /Users request with a userName no other has used (the counter spans the rounds). */
function creator(base: string): (req: Request) => Request {
  let created = 0;
  const runId = randomBytes(3).toString('hex');
  return (req) =>
    Object.assign(req, {
      method: 'POST',
      path: `${base}/Users`,
      body: JSON.stringify({
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
        userName: `new-${runId}-${created++}@corp.example`,
        name: { givenName: 'New', familyName: 'User' },
        emails: [{ type: 'work', value: `new-${created}@corp.example`, primary: true }],
        active: true,
      }),
    });
}

/**
 * The ratios with targets, measured in turns, ROUNDS times: scimd's lookup and POST, then each
 * baseline, each server alone on the machine (PGlite serves one process), so that a slow stretch of
 * a shared machine weighs on one round, not on one side of a ratio.
 */
async function compareLookup(
  seeded: Seeded,
  env: Record<string, string>,
  database: Place,
): Promise<Comparison> {
  const userName = () => pick(seeded.users).userName;
  const base = `/scim/v2/${seeded.orgId}`;
  const lookup = (req: Request) => {
    req.path = `${base}/Users?filter=${encodeURIComponent(`userName eq "${userName()}"`)}`;
    return req;
  };
  const servers = [
    {
      command: [SCIMD],
      env,
      scenarios: [
        { name: LOOKUP, request: lookup },
        { name: CREATE, request: creator(base) },
      ],
    },
    ...BASELINES.map((b) => ({
      command: ['--import', 'tsx', 'bench/baseline-server.ts'],
      env: { ...env, BASELINE_PREPARED: b.prepared },
      scenarios: [
        {
          name: b.name,
          request: (req: Request) => {
            req.path = `/lookup?userName=${encodeURIComponent(userName())}`;
            return req;
          },
        },
      ],
    })),
  ]
    .map((server) => ({ ...server, scenarios: server.scenarios.filter((x) => !ONLY || ONLY.test(x.name)) }))
    .filter((server) => server.scenarios.length > 0);
  const rounds: Row[][] = [];
  for (let round = 1; round <= ROUNDS && servers.length > 0; round++) {
    console.log(`lookup, POST and baselines, round ${round} of ${ROUNDS}`);
    const rows: Row[] = [];
    for (const server of servers) {
      const { child, origin } = await start(server.command, server.env);
      try {
        // POST warms up on an organization of its own: the measured one keeps its seeded users.
        for (const scenario of server.scenarios)
          await (scenario.name === CREATE
            ? warmUp(origin, seeded.scratch.token, creator(`/scim/v2/${seeded.scratch.orgId}`))
            : warmUp(origin, seeded.token, scenario.request));
        for (const scenario of server.scenarios) {
          const counted = server.command[0] === SCIMD ? { base } : {};
          rows.push(
            (await load(scenario.name, origin, child.pid!, seeded.token, scenario.request, counted))!,
          );
        }
      } finally {
        await stop(child);
      }
    }
    // Every round starts on the seeded organization: the users POST created go, with their audit.
    if (servers.some((server) => server.scenarios.some((x) => x.name === CREATE)))
      await removeCreatedUsers(database, seeded.orgId);
    rounds.push(rows);
  }
  const ratio = (top: string, bottom: string) => {
    const pairs = rounds
      .map((r) => [r.find((x) => x.scenario === top), r.find((x) => x.scenario === bottom)] as const)
      .filter(([a, b]) => a && b);
    return pairs.length > 0
      ? median(pairs.map(([a, b]) => a!.requestsPerSecond / b!.requestsPerSecond))
      : undefined;
  };
  const rows = servers.flatMap((server) =>
    server.scenarios.map((scenario) => {
      const measured = rounds.flatMap((r) => r.filter((row) => row.scenario === scenario.name));
      const middle = median(measured.map((row) => row.requestsPerSecond));
      return measured.find((row) => row.requestsPerSecond === middle)!;
    }),
  );
  return {
    rows,
    lookupVsBaseline: ratio(LOOKUP, BASELINES[0].name),
    lookupVsPreparedBaseline: ratio(LOOKUP, BASELINES[1].name),
    createVsLookup: ratio(CREATE, LOOKUP),
    rounds,
  };
}

/** An import the way Okta runs one: one client, startIndex pages of 100 until totalResults. */
interface ImportWalk {
  users: number;
  seconds: number;
  p99PageMs: number;
  maxPageMs: number;
}

const IMPORT = 'import: one client, startIndex pages of 100';

async function walkImport(origin: string, base: string, token: string): Promise<ImportWalk> {
  const started = performance.now();
  const pageMs: number[] = [];
  let users = 0;
  for (let start = 1, total = 1; start <= total; start += 100) {
    const asked = performance.now();
    const res = await fetch(`${origin}${base}/Users?startIndex=${start}&count=100`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const body = (await res.json()) as { totalResults: number; Resources: unknown[] };
    pageMs.push(performance.now() - asked);
    total = body.totalResults;
    users += body.Resources.length;
  }
  pageMs.sort((a, b) => a - b);
  return {
    users,
    seconds: Math.round((performance.now() - started) / 100) / 10,
    p99PageMs: Math.round(pageMs[Math.floor(pageMs.length * 0.99)] ?? 0),
    maxPageMs: Math.round(pageMs.at(-1) ?? 0),
  };
}

async function runScenarios(
  seeded: Seeded,
  env: Record<string, string>,
): Promise<{ rows: Row[]; walk: ImportWalk | undefined }> {
  const rows: Array<Row | undefined> = [];
  let walk: ImportWalk | undefined;
  const { child, origin } = await start([SCIMD], env);
  const pid = child.pid!;
  const base = `/scim/v2/${seeded.orgId}`;
  const token = seeded.token;
  const measure = (name: string, setup: Setup) => load(name, origin, pid, token, setup, { base });
  try {
    const lookup = (req: { path: string }) => {
      req.path = `${base}/Users?filter=${encodeURIComponent(`userName eq "${pick(seeded.users).userName}"`)}`;
      return req;
    };
    await warmUp(origin, token, lookup);

    let flip = false;
    rows.push(
      await measure('PATCH /Users/{id} (active toggle)', (req) => {
        flip = !flip;
        Object.assign(req, {
          method: 'PATCH',
          path: `${base}/Users/${pick(seeded.users).id}`,
          body: patchBody([{ op: 'replace', path: 'active', value: flip }]),
        });
        return req;
      }),
    );

    rows.push(
      await measure('PUT /Users/{id}', (req) => {
        const user = pick(seeded.users);
        Object.assign(req, {
          method: 'PUT',
          path: `${base}/Users/${user.id}`,
          body: JSON.stringify({
            schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
            userName: user.userName,
            name: { givenName: 'Put', familyName: 'User' },
            emails: [{ type: 'work', value: user.userName, primary: true }],
            title: `Title ${Math.random()}`,
            active: true,
          }),
        });
        return req;
      }),
    );

    const page = (query: string) => (req: { path: string }) => {
      req.path = `${base}/Users?${query}`;
      return req;
    };
    rows.push(await measure('GET /Users page of 100, first page', page('count=100')));
    // A filter no index serves, matching a seventh of the users: its exact count reads them all.
    const filtered = encodeURIComponent('title eq "Engineer 3"');
    rows.push(
      await measure(
        'GET /Users page of 100, filter title eq (1 in 7 users)',
        page(`count=100&filter=${filtered}`),
      ),
    );
    const deep = Math.max(1, USERS - 9_999);
    rows.push(
      await measure(`GET /Users page of 100, startIndex ${deep}`, page(`count=100&startIndex=${deep}`)),
    );

    // Walk to the same depth by cursor once (a cursor is tied to its count), then load that page.
    const deepByCursor = `GET /Users page of 100, after ${deep - 1} rows by cursor`;
    let cursor = '';
    for (let seen = 0; seen < deep - 1 && (!ONLY || ONLY.test(deepByCursor)); seen += 100) {
      const res = await fetch(`${origin}${base}/Users?count=100&attributes=id&cursor=${cursor}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      cursor = ((await res.json()) as { nextCursor: string }).nextCursor;
    }
    rows.push(await measure('GET /Users page of 100, first page by cursor', page('count=100&cursor')));
    rows.push(await measure(deepByCursor, page(`count=100&cursor=${cursor}`)));
    if (!ONLY || ONLY.test(IMPORT)) {
      walk = await walkImport(origin, base, token);
      console.log(
        `${IMPORT}: ${walk.users} users in ${walk.seconds} s, page p99 ${walk.p99PageMs} ms, max ${walk.maxPageMs} ms`,
      );
    }

    let spareIndex = 0;
    const addMember = (group: string) => (req: { path: string }) => {
      const user = seeded.spare[spareIndex++ % seeded.spare.length]!;
      Object.assign(req, {
        method: 'PATCH',
        path: `${base}/Groups/${group}`,
        body: patchBody([{ op: 'add', path: 'members', value: [{ value: user.id }] }]),
      });
      return req;
    };
    rows.push(await measure('PATCH add 1 member, 10-member group', addMember(seeded.smallGroup)));
    rows.push(await measure(`PATCH add 1 member, ${USERS}-member group`, addMember(seeded.bigGroup)));
    rows.push(
      await measure(`GET ${USERS}-member group, excludedAttributes=members`, (req) => {
        req.path = `${base}/Groups/${seeded.bigGroup}?excludedAttributes=members`;
        return req;
      }),
    );
    rows.push(
      await measure('GET empty group, excludedAttributes=members', (req) => {
        req.path = `${base}/Groups/${seeded.emptyGroup}?excludedAttributes=members`;
        return req;
      }),
    );

    // Writes that add or remove resources run in the writes organization, after every read.
    const writes = `/scim/v2/${seeded.scratch.orgId}`;
    const measureWrites = (name: string, setup: Setup) =>
      load(name, origin, pid, seeded.scratch.token, setup, { base: writes });
    let groupIndex = 0;
    rows.push(
      await measureWrites('POST /Groups', (req) =>
        Object.assign(req, {
          method: 'POST',
          path: `${writes}/Groups`,
          body: JSON.stringify({
            schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
            displayName: `Bench group ${++groupIndex}`,
          }),
        }),
      ),
    );
    let doomedIndex = 0;
    rows.push(
      await measureWrites('DELETE /Users/{id} (deactivate)', (req) =>
        Object.assign(req, {
          method: 'DELETE',
          path: `${writes}/Users/${seeded.scratch.doomed[doomedIndex++ % seeded.scratch.doomed.length]}`,
        }),
      ),
    );
  } finally {
    await stop(child);
  }

  return { rows: rows.filter((row) => row !== undefined), walk };
}

function printAndSave(
  comparison: Comparison,
  scenarios: Row[],
  walk: ImportWalk | undefined,
  elapsedMs: number,
): void {
  const rows = [
    ...comparison.rows.filter((r) => r.scenario === LOOKUP || r.scenario === CREATE),
    ...scenarios,
    ...comparison.rows.filter((r) => r.scenario !== LOOKUP && r.scenario !== CREATE),
  ];
  const get = (prefix: string) => rows.find((r) => r.scenario.startsWith(prefix));
  const ratio = (a: number | undefined, b: number | undefined) =>
    a === undefined || b === undefined ? undefined : a / b;
  const mean = (prefix: string) => get(prefix)?.meanMs;
  const ratios: Record<string, number | undefined> = {
    lookupVsBaseline: comparison.lookupVsBaseline,
    lookupVsPreparedBaseline: comparison.lookupVsPreparedBaseline,
    createVsLookup: comparison.createVsLookup,
    deepCursorVsFirstPage: ratio(
      mean('GET /Users page of 100, after'),
      mean('GET /Users page of 100, first page by cursor'),
    ),
    deepIndexVsFirstPage: ratio(
      mean('GET /Users page of 100, startIndex'),
      mean('GET /Users page of 100, first page'),
    ),
    bigVsSmallGroupPatch: ratio(mean(`PATCH add 1 member, ${USERS}`), mean('PATCH add 1 member, 10')),
    bigVsEmptyGroupGet: ratio(mean(`GET ${USERS}-member group`), mean('GET empty group')),
    ...Object.fromEntries(
      VERSUS_LOOKUP.map((name) => [
        name,
        ratio(get(name)?.requestsPerSecond, get(LOOKUP)?.requestsPerSecond),
      ]),
    ),
    ...Object.fromEntries(
      VERSUS_POST.map((name) => [name, ratio(get(name)?.requestsPerSecond, get(CREATE)?.requestsPerSecond)]),
    ),
  };
  const show = (value: number | undefined) => (value === undefined ? ' n/a' : value.toFixed(2));
  // Judged on the unrounded ratio: 0.497 prints as 0.50 but misses a target of 0.5.
  const judge = (value: number | undefined, met: (v: number) => boolean) =>
    value === undefined ? '' : met(value) ? ': met' : `: NOT met (${value.toFixed(3)})`;
  const errors = rows.reduce((n, r) => n + r.errors, 0);
  const peakRss = Math.max(...rows.filter((r) => !r.scenario.startsWith('baseline')).map((r) => r.peakRssMb));
  const perRound = (top: string, bottom: string) =>
    comparison.rounds
      .map((round) => {
        const a = round.find((r) => r.scenario === top);
        const b = round.find((r) => r.scenario === bottom);
        return a && b ? show(a.requestsPerSecond / b.requestsPerSecond) : 'n/a';
      })
      .join(', ');
  const machine = `${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, node ${process.version}, ${pgUrl ? 'Postgres' : 'PGlite'}`;
  console.log(
    `\n${machine}; ${USERS} users; ${CONNECTIONS} connections, ${DURATION} s per scenario; the lookup, POST and the baselines: the median of ${ROUNDS} rounds\n`,
  );
  console.log(
    `| scenario | users | req/s | p50 ms | p99 ms | errors | peak RSS MB | server CPU ms/req | Postgres CPU ms/req |\n|---|---|---|---|---|---|---|---|---|`,
  );
  for (const r of rows)
    console.log(
      `| ${r.scenario} | ${r.users ?? '-'} | ${r.requestsPerSecond} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.peakRssMb} | ${r.cpuMsPerRequest} | ${r.dbCpuMsPerRequest ?? '-'} |`,
    );
  console.log(`
ratios:
  filter lookup / baseline (req/s)          ${show(ratios.lookupVsBaseline)}   target >= 0.75${judge(ratios.lookupVsBaseline, (v) => v >= 0.75)} (median of the rounds: ${perRound(LOOKUP, BASELINES[0].name)})
  filter lookup / prepared baseline (req/s) ${show(ratios.lookupVsPreparedBaseline)}   (reported; rounds: ${perRound(LOOKUP, BASELINES[1].name)})
  POST /Users / filter lookup (req/s)        ${show(ratios.createVsLookup)}   target >= 0.5${judge(ratios.createVsLookup, (v) => v >= 0.5)} (median of the rounds: ${perRound(CREATE, LOOKUP)})
  deep page by cursor / first page (mean)     ${show(ratios.deepCursorVsFirstPage)}   target <= 1.5${judge(ratios.deepCursorVsFirstPage, (v) => v <= 1.5)}
  deep page by startIndex / first page (mean) ${show(ratios.deepIndexVsFirstPage)}   (reported)
  1-member PATCH big / small group (mean)     ${show(ratios.bigVsSmallGroupPatch)}   target < 2${judge(ratios.bigVsSmallGroupPatch, (v) => v < 2)}
  lean GET big / empty group (mean)           ${show(ratios.bigVsEmptyGroupGet)}   target < 2${judge(ratios.bigVsEmptyGroupGet, (v) => v < 2)}
${VERSUS_LOOKUP.map((name) => `  ${name} / lookup (req/s)  ${show(ratios[name])}   target >= 0.1${judge(ratios[name], (v) => v >= 0.1)}`).join('\n')}
${VERSUS_POST.map((name) => `  ${name} / POST /Users (req/s)  ${show(ratios[name])}   target >= 0.8${judge(ratios[name], (v) => v >= 0.8)}`).join('\n')}
  ${IMPORT}: ${walk ? `${walk.users} users in ${walk.seconds} s, page p99 ${walk.p99PageMs} ms, max ${walk.maxPageMs} ms   target < 20 s${judge(walk.seconds, (v) => v < 20)}, p99 < 100 ms${judge(walk.p99PageMs, (v) => v < 100)}` : 'n/a'}
  errors                                     ${errors}   target 0${judge(errors, (v) => v === 0)}
  peak server RSS (MB)                       ${peakRss}   target < 250 on Postgres${pgUrl ? judge(peakRss, (v) => v < 250) : ''}
total time ${(elapsedMs / 1000).toFixed(0)} s`);
  mkdirSync('bench/results', { recursive: true });
  writeFileSync(
    'bench/results/latest.json',
    `${JSON.stringify({ at: new Date().toISOString(), machine, users: USERS, connections: CONNECTIONS, durationSeconds: DURATION, rows, ratios, importWalk: walk, lookupRounds: comparison.rounds }, null, 2)}\n`,
  );
}

await main();
