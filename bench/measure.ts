// How the bench measures: servers as child processes, load from autocannon, and what each load cost
// the server and Postgres (CPU from /proc), with the server's peak memory.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import autocannon from 'autocannon';
import pg from 'pg';

export const DURATION = Number(process.env.BENCH_DURATION ?? 6);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const WARM_UP = Number(process.env.BENCH_WARM_UP ?? 2);
/**
 * A new process's first warm-up: its JIT takes several seconds of load to settle (a scimd lookup
 * costs its process two to three times the CPU in the first 3 s that it does after 9 s); the
 * scenarios after it share most of its code.
 */
const FIRST_WARM_UP = Number(process.env.BENCH_FIRST_WARM_UP ?? 10);
const PROFILE = process.env.BENCH_PROFILE;
/** Postgres' CPU is read from its processes on this machine; none when the database is PGlite. */
const onPostgres = Boolean(process.env.BENCH_DATABASE_URL);

export interface Row {
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
  /** The whole machine's CPU time per request: the server, Postgres, the load's client, the kernel. */
  machineMsPerRequest: number;
  /** The users of the organization the scenario ran in, when it started (scimd's scenarios only). */
  users: number | undefined;
}

export interface Request {
  path: string;
  method?: string;
  body?: string;
}
/** Fills in each request autocannon sends (autocannon's setupRequest). */
export type Setup = (req: Request) => Request;

/** CPU seconds spread over requests, in ms a request to the microsecond. */
export const perRequestMs = (seconds: number, requests: number) =>
  Math.round((seconds * 1000 * 1000) / Math.max(1, requests)) / 1000;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

/**
 * CPU seconds (user + system) the process has used so far; clock ticks are 1/100 s on Linux. With
 * `children`, also what its children that have ended used.
 */
function cpuSeconds(pid: number, children = false): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    const own = Number(fields[11]) + Number(fields[12]);
    return (children ? own + Number(fields[13]) + Number(fields[14]) : own) / 100;
  } catch {
    return 0;
  }
}

/**
 * CPU seconds of every Postgres process on this machine, with those that ended (backends, autovacuum
 * workers): the postmaster has collected their time as its children's.
 */
function postgresCpuSeconds(): number {
  if (!onPostgres) return 0;
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres')
        total += cpuSeconds(Number(entry), true);
    } catch {
      // The process ended while being read.
    }
  }
  return total;
}

/**
 * CPU seconds the whole machine has been busy so far, all its cores (user, nice, system, irq and
 * softirq time from /proc/stat; clock ticks are 1/100 s).
 */
export function machineCpuSeconds(): number {
  const [user, nice, system, , , irq, softirq] = readFileSync('/proc/stat', 'utf8')
    .split('\n', 1)[0]!
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return (user! + nice! + system! + irq! + softirq!) / 100;
}

export function rssMb(pid: number): number {
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

export interface Server {
  readonly child: ChildProcess;
  readonly origin: string;
}

/** A server process (node with `command`), ready to serve. */
export async function start(command: string[], env: Record<string, string>): Promise<Server> {
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

export function stop(server: Server): Promise<void> {
  // A process that has already ended would never say so again.
  if (server.child.exitCode !== null || server.child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    server.child.once('exit', () => resolve());
    server.child.kill('SIGTERM');
  });
}

/** The scenarios each server has been warmed on. */
const warmed = new WeakMap<Server, Set<string>>();

/**
 * Unrecorded load first, so the JIT has compiled the hot paths before anything is measured: longer
 * for a process's first scenario than for the ones after it, and none for a `scenario` this process
 * has already been warmed on (its code is compiled; a long-lived server measures it again).
 */
export async function warmUp(server: Server, token: string, setup: Setup, scenario?: string): Promise<void> {
  const seen = warmed.get(server) ?? new Set<string>();
  if (scenario !== undefined && seen.has(scenario)) return;
  const duration = warmed.has(server) ? WARM_UP : Math.max(WARM_UP, FIRST_WARM_UP);
  warmed.set(server, seen);
  if (scenario !== undefined) seen.add(scenario);
  await autocannon({
    url: server.origin,
    connections: CONNECTIONS,
    duration,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' },
    requests: [{ setupRequest: setup as never }],
  });
}

/** The organization's users, as scimd counts them for totalResults. */
async function countUsers(origin: string, token: string, base: string): Promise<number> {
  const res = await fetch(`${origin}${base}/Users?count=0`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return ((await res.json()) as { totalResults: number }).totalResults;
}

/** What one stretch of load did and cost. */
interface Sample {
  requests: number;
  seconds: number;
  /** Each stretch's p50 (a merged sample reports their median). */
  p50s: number[];
  meanMs: number;
  p99: number;
  errors: number;
  peakRssMb: number;
  cpu: number;
  dbCpu: number;
  machine: number;
}

/** `setup`'s requests to the server for `seconds`, and what they cost. */
async function sample(
  server: Server,
  token: string,
  setup: Setup,
  options: { connections?: number; seconds?: number },
): Promise<Sample> {
  const pid = server.child.pid!;
  let peak = rssMb(pid);
  const cpuBefore = cpuSeconds(pid);
  const dbCpuBefore = postgresCpuSeconds();
  const machineBefore = machineCpuSeconds();
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(pid));
  }, 100);
  const result = await autocannon({
    url: server.origin,
    connections: options.connections ?? CONNECTIONS,
    duration: options.seconds ?? DURATION,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' },
    requests: [{ setupRequest: setup as never }],
  });
  clearInterval(sampler);
  return {
    requests: result.requests.total,
    seconds: result.duration,
    p50s: [result.latency.p50],
    meanMs: result.latency.mean,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
    peakRssMb: peak,
    cpu: cpuSeconds(pid) - cpuBefore,
    dbCpu: postgresCpuSeconds() - dbCpuBefore,
    machine: machineCpuSeconds() - machineBefore,
  };
}

/**
 * Stretches of one scenario as one: their requests, time and CPU added up, the mean latency weighted
 * by requests, the worst stretch's p99 (an upper bound of the whole's).
 */
function merged(samples: Sample[]): Sample {
  const sum = (field: 'requests' | 'seconds' | 'errors' | 'cpu' | 'dbCpu' | 'machine') =>
    samples.reduce((total, s) => total + s[field], 0);
  const requests = sum('requests');
  return {
    requests,
    seconds: sum('seconds'),
    p50s: samples.flatMap((s) => s.p50s),
    meanMs: samples.reduce((total, s) => total + s.meanMs * s.requests, 0) / Math.max(1, requests),
    p99: Math.max(...samples.map((s) => s.p99)),
    errors: sum('errors'),
    peakRssMb: Math.max(...samples.map((s) => s.peakRssMb)),
    cpu: sum('cpu'),
    dbCpu: sum('dbCpu'),
    machine: sum('machine'),
  };
}

/** The middle value; of an even count, the lower of the two middle ones. */
export const median = (values: readonly number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!;

/** The row of a scenario's sample, printed as it is made. */
function report(name: string, s: Sample, users: number | undefined): Row {
  const row: Row = {
    scenario: name,
    requestsPerSecond: Math.round(s.requests / Math.max(s.seconds, 0.001)),
    p50: median(s.p50s),
    meanMs: s.meanMs,
    p99: s.p99,
    errors: s.errors,
    peakRssMb: Math.round(s.peakRssMb),
    cpuMsPerRequest: perRequestMs(s.cpu, s.requests),
    dbCpuMsPerRequest: onPostgres ? perRequestMs(s.dbCpu, s.requests) : undefined,
    machineMsPerRequest: perRequestMs(s.machine, s.requests),
    users,
  };
  console.log(
    `${name.padEnd(52)} cpu ${row.cpuMsPerRequest} ms/req${row.dbCpuMsPerRequest === undefined ? '' : `  postgres ${row.dbCpuMsPerRequest} ms/req`}  machine ${row.machineMsPerRequest} ms/req  ${row.requestsPerSecond} req/s${users === undefined ? '' : ` on ${users} users`}  p50 ${row.p50} ms  p99 ${row.p99} ms  errors ${row.errors}  rss ${row.peakRssMb} MB`,
  );
  return row;
}

/** `setup`'s requests from CONNECTIONS connections for DURATION seconds, and what they cost. */
export async function load(
  name: string,
  server: Server,
  token: string,
  setup: Setup,
  options: { connections?: number; base?: string; seconds?: number } = {},
): Promise<Row> {
  const users = options.base === undefined ? undefined : await countUsers(server.origin, token, options.base);
  return report(name, await sample(server, token, setup, options), users);
}

/** A scenario measured beside others (loadInTurns). */
export interface Contender {
  readonly name: string;
  readonly server: Server;
  readonly token: string;
  readonly setup: Setup;
  /** The SCIM base of the organization it runs in, whose users the row reports. */
  readonly base?: string;
}

/**
 * Scenarios whose rates are compared, on servers running side by side, measured in `turns` turns of
 * DURATION / turns seconds each, in an order that reverses every turn: a slow stretch of a shared
 * machine then weighs on every side of their ratios alike, not on whichever ran in it.
 */
export async function loadInTurns(contenders: readonly Contender[], turns: number): Promise<Row[]> {
  const samples = new Map<Contender, Sample[]>(contenders.map((c) => [c, []]));
  const users = new Map<Contender, number | undefined>();
  for (const c of contenders)
    users.set(c, c.base === undefined ? undefined : await countUsers(c.server.origin, c.token, c.base));
  for (let turn = 0; turn < turns; turn++) {
    for (const c of turn % 2 === 0 ? contenders : [...contenders].reverse())
      samples.get(c)!.push(await sample(c.server, c.token, c.setup, { seconds: DURATION / turns }));
  }
  return contenders.map((c) => report(c.name, merged(samples.get(c)!), users.get(c)));
}

/**
 * A database of its own on the Postgres server of `serverUrl` (`<prefix>_<random>`), its removal, and
 * `vacuum`: what autovacuum would have done by then (a server may have it off), so that statements
 * are planned for the tables as they are.
 */
export async function scratchDatabase(
  serverUrl: string,
  prefix: string,
): Promise<{
  readonly url: string;
  readonly drop: () => Promise<void>;
  readonly vacuum: () => Promise<void>;
}> {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const run = async (connectionString: string, statement: string) => {
    const client = new pg.Client({ connectionString });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await run(serverUrl, `create database ${name}`);
  return {
    url: url.toString(),
    drop: () => run(serverUrl, `drop database if exists ${name} with (force)`),
    vacuum: () => run(url.toString(), 'vacuum analyze'),
  };
}
