// `npm run soak`: a sustained mix against one scimd over loopback for SOAK_MINUTES (10): creates,
// lookups, PATCHes, member adds, first pages and pages at a random startIndex, deletes; with a
// webhook endpoint for every created user and a reader of the change feed. Each minute prints the
// rate and p99 of each operation, the server's RSS and what has been delivered and read; the end
// prints whether every create was delivered and read, and how pages held up as the organization grew.
// It asserts nothing, like `npm run bench`.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median, rssMb, type Server, scratchDatabase, start, stop } from './measure.js';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 10);
const CONNECTIONS = Number(process.env.SOAK_CONNECTIONS ?? 8);
const pgUrl = process.env.BENCH_DATABASE_URL;
const ADMIN_TOKEN = `soak-${randomBytes(24).toString('hex')}`;
const GROUPS = 4;

/** Each operation and its share of the mix. */
const MIX = [
  ['create', 30],
  ['lookup', 25],
  ['patch', 15],
  ['member add', 10],
  ['page at random startIndex', 8],
  ['first page', 4],
  ['delete', 8],
] as const;
type Operation = (typeof MIX)[number][0];
const WEIGHT = MIX.reduce((n, [, w]) => n + w, 0);

function pick(): Operation {
  let at = Math.random() * WEIGHT;
  for (const [operation, weight] of MIX) {
    at -= weight;
    if (at < 0) return operation;
  }
  return 'lookup';
}

/** Latencies (ms) and errors of each operation, for one minute. */
class Minute {
  readonly ms = new Map<Operation, number[]>();
  readonly started = performance.now();
  /** Its length in seconds, once it ends (the last one may be short). */
  seconds = 60;
  errors = 0;
  add(operation: Operation, ms: number) {
    const list = this.ms.get(operation);
    if (list) list.push(ms);
    else this.ms.set(operation, [ms]);
  }
}

const percentile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!;
};

/** A webhook receiver on loopback that counts the created users delivered (by resource id). */
async function receiver(): Promise<{ url: string; created: Set<string>; close: () => void }> {
  const created = new Set<string>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        type: string;
        data: { resourceId: string };
      };
      if (body.type === 'user.created') created.add(body.data.resourceId);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    created,
    close: () => server.close(),
  };
}

async function call(origin: string, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${origin}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': path.startsWith('/admin/') ? 'application/json' : 'application/scim+json',
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

async function main(): Promise<void> {
  const hooks = await receiver();
  let dropDatabase = async () => {};
  let vacuum: (() => Promise<void>) | undefined;
  let env: Record<string, string>;
  let dataDir: string | undefined;
  if (pgUrl) {
    const database = await scratchDatabase(pgUrl, 'scimd_soak');
    env = { DATABASE_URL: database.url };
    dropDatabase = database.drop;
    vacuum = database.vacuum;
  } else {
    dataDir = mkdtempSync(join(tmpdir(), 'scimd-soak-'));
    env = { DATA_DIR: dataDir, DATABASE_URL: '' };
  }
  let server: Server | undefined;
  try {
    server = await start(['dist/src/index.js'], {
      ...env,
      SCIMD_ADMIN_TOKEN: ADMIN_TOKEN,
      WEBHOOKS_ALLOW_PRIVATE: 'true',
      LOG_LEVEL: 'warn',
    });
    await soak(server, hooks, vacuum);
  } finally {
    if (server) await stop(server);
    hooks.close();
    await dropDatabase();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * The mix for MINUTES, printing each minute. `vacuum` (Postgres) runs each minute beside the load, as
 * autovacuum would on a server that has it on: without it, plans made while the tables were empty
 * and the dead rows of every update slow everything down minute by minute.
 */
async function soak(
  server: Server,
  hooks: Awaited<ReturnType<typeof receiver>>,
  vacuum?: () => Promise<void>,
): Promise<void> {
  const { origin } = server;
  const admin = (method: string, path: string, body?: unknown) =>
    call(origin, ADMIN_TOKEN, method, `/admin/v1${path}`, body);
  const orgCreated = await admin('POST', '/orgs', { name: 'soak', groupSync: true });
  if (orgCreated.status !== 201)
    throw new Error(`organization: ${orgCreated.status} ${JSON.stringify(orgCreated.json)}`);
  const org = orgCreated.json as { id: string };
  const token = (await admin('POST', `/orgs/${org.id}/tokens`, { name: 'soak' })).json.token as string;
  const hook = await admin('POST', '/webhooks', { url: hooks.url, events: ['user.created'], orgId: org.id });
  if (hook.status !== 201) throw new Error(`webhook endpoint: ${hook.status} ${JSON.stringify(hook.json)}`);
  const base = `/scim/v2/${org.id}`;
  const scim = (method: string, path: string, body?: unknown) =>
    call(origin, token, method, base + path, body);
  const groups: string[] = [];
  for (let i = 0; i < GROUPS; i++) {
    const res = await scim('POST', '/Groups', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
      displayName: `Soak ${i}`,
    });
    groups.push(res.json.id as string);
  }

  // The users alive now: ids and userNames side by side, so a delete swaps the last one in.
  const ids: string[] = [];
  const names: string[] = [];
  const createdIds = new Set<string>();
  const any = () => Math.floor(Math.random() * ids.length);
  // Users a request in flight acts on, by how many: a delete takes none of them (no 404 by race).
  const busy = new Map<string, number>();
  const using = async (work: (id: string) => Promise<number>) => {
    const id = ids[any()]!;
    busy.set(id, (busy.get(id) ?? 0) + 1);
    try {
      return await work(id);
    } finally {
      const left = busy.get(id)! - 1;
      if (left === 0) busy.delete(id);
      else busy.set(id, left);
    }
  };
  const take = () => {
    let i = any();
    for (let tries = 0; busy.has(ids[i]!) && tries < 20; tries++) i = any();
    const id = ids[i]!;
    ids[i] = ids[ids.length - 1]!;
    names[i] = names[names.length - 1]!;
    ids.pop();
    names.pop();
    return id;
  };

  const run: Record<Operation, () => Promise<number>> = {
    create: async () => {
      const userName = `soak-${randomUUID()}@example.com`;
      const res = await scim('POST', '/Users', {
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
        userName,
        name: { givenName: 'Soak', familyName: 'User' },
        emails: [{ value: userName, type: 'work', primary: true }],
        active: true,
      });
      if (res.status === 201) {
        ids.push(res.json.id as string);
        names.push(userName);
        createdIds.add(res.json.id as string);
      }
      return res.status;
    },
    lookup: async () =>
      (await scim('GET', `/Users?filter=${encodeURIComponent(`userName eq "${names[any()]}"`)}`)).status,
    patch: () =>
      using(
        async (id) =>
          (
            await scim('PATCH', `/Users/${id}`, {
              schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
              Operations: [{ op: 'replace', path: 'title', value: `Title ${Math.random()}` }],
            })
          ).status,
      ),
    'member add': () =>
      using(
        async (id) =>
          (
            await scim('PATCH', `/Groups/${groups[Math.floor(Math.random() * GROUPS)]}`, {
              schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
              Operations: [{ op: 'add', path: 'members', value: [{ value: id }] }],
            })
          ).status,
      ),
    'page at random startIndex': async () =>
      (await scim('GET', `/Users?startIndex=${1 + Math.floor(Math.random() * ids.length)}&count=100`)).status,
    'first page': async () => (await scim('GET', '/Users?startIndex=1&count=100')).status,
    delete: async () => (await scim('DELETE', `/Users/${take()}`)).status,
  };

  // The feed's reader: long polls from the start, counting the created users it reads.
  const read = new Set<string>();
  let reading = true;
  const reader = (async () => {
    let cursor = '';
    while (reading) {
      const res = await admin(
        'GET',
        `/changes?orgId=${org.id}&types=user.created&limit=1000&wait=1${cursor && `&after=${cursor}`}`,
      );
      if (res.status !== 200) continue;
      for (const c of res.json.changes as { resourceId: string }[]) read.add(c.resourceId);
      cursor = res.json.nextCursor as string;
    }
  })();

  const minutes: Minute[] = [];
  let current = new Minute();
  const started = performance.now();
  const end = started + MINUTES * 60_000;
  const worker = async () => {
    while (performance.now() < end) {
      // A user to act on before there is one: create.
      const operation = ids.length < 10 ? 'create' : pick();
      const at = performance.now();
      let status: number;
      try {
        status = await run[operation]();
      } catch {
        status = 0;
      }
      const minute = current;
      minute.add(operation, performance.now() - at);
      if (status === 0 || status >= 400) minute.errors++;
    }
  };
  const pid = server.child.pid!;
  let vacuuming: Promise<void> | undefined;
  const ticker = setInterval(() => {
    minutes.push(current);
    printMinute(minutes.length, current, rssMb(pid), ids.length, hooks.created.size, read.size);
    current = new Minute();
    if (vacuum && !vacuuming) vacuuming = vacuum().finally(() => (vacuuming = undefined));
  }, 60_000);
  console.log(
    `soak: ${MINUTES} min, ${CONNECTIONS} connections, on ${pgUrl ? 'Postgres' : 'PGlite'}; per minute: req/s, p99 ms per operation`,
  );
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  clearInterval(ticker);
  await vacuuming;
  // The last stretch, if the last tick did not close it: a minute of its own, however short.
  if (current.ms.size > 0) {
    current.seconds = (performance.now() - current.started) / 1000;
    minutes.push(current);
    printMinute(minutes.length, current, rssMb(pid), ids.length, hooks.created.size, read.size);
  }

  // Every create delivered and read: wait for the stragglers (up to a minute).
  const settled = performance.now() + 60_000;
  while (
    (hooks.created.size < createdIds.size || read.size < createdIds.size) &&
    performance.now() < settled
  ) {
    await new Promise((r) => setTimeout(r, 200));
  }
  reading = false;
  await reader;
  summarize(minutes, createdIds.size, hooks.created.size, read.size);
}

function printMinute(n: number, m: Minute, rss: number, users: number, delivered: number, read: number) {
  const total = [...m.ms.values()].reduce((sum, list) => sum + list.length, 0);
  const parts = MIX.map(([operation]) => {
    const list = m.ms.get(operation) ?? [];
    return `${operation} ${(list.length / m.seconds).toFixed(0)}/s p99 ${percentile(list, 0.99).toFixed(0)}`;
  });
  console.log(
    `minute ${n}${m.seconds < 59 ? ` (${m.seconds.toFixed(0)} s)` : ''}: ${(total / m.seconds).toFixed(0)} req/s, ${m.errors} errors, ${users} users, rss ${rss.toFixed(0)} MB, delivered ${delivered}, read ${read} | ${parts.join(' | ')}`,
  );
}

function summarize(minutes: Minute[], creates: number, delivered: number, read: number): void {
  const all = (operation: Operation) => minutes.flatMap((m) => m.ms.get(operation) ?? []);
  const requests = minutes.reduce((n, m) => n + [...m.ms.values()].reduce((s, l) => s + l.length, 0), 0);
  const errors = minutes.reduce((n, m) => n + m.errors, 0);
  // The last whole minute: a short tail says little.
  const last = minutes.findLast((m) => m.seconds >= 59) ?? minutes[minutes.length - 1]!;
  const firstPage = median(last.ms.get('first page') ?? [0]);
  const randomPage = median(last.ms.get('page at random startIndex') ?? [0]);
  const rate = (m: Minute) => [...m.ms.values()].reduce((s, l) => s + l.length, 0) / m.seconds;
  console.log(`
requests ${requests}, creates ${creates}, errors ${errors}
every create delivered: ${delivered === creates ? 'yes' : `NO (${delivered} of ${creates})`}; read from the feed: ${read === creates ? 'yes' : `NO (${read} of ${creates})`}
throughput, last whole minute / first: ${(rate(last) / Math.max(0.001, rate(minutes[0]!))).toFixed(2)}
page at a random startIndex, p50 in the last whole minute: ${randomPage.toFixed(1)} ms; first page ${firstPage.toFixed(1)} ms; ratio ${(randomPage / Math.max(0.1, firstPage)).toFixed(2)}   target <= 2${randomPage <= 2 * firstPage ? ': met' : ': NOT met'}
p99 over the run (ms): ${MIX.map(([o]) => `${o} ${percentile(all(o), 0.99).toFixed(0)}`).join(', ')}`);
}

await main();
