// Roles: what a mapping from a group to a role costs. Mapping the 100,000-member group, from the
// PUT of the mapping until every member's role is in the read model and in the feed, while another
// organization's lookup runs under load; while it is mapped, the work the bench measures on a
// mapped group (a member add); then taking the mapping away.
import autocannon from 'autocannon';
import { type Kysely, sql } from 'kysely';
import type { DB } from '../src/db/tables.js';
import { CONNECTIONS, median, type Server, type Setup, warmUp } from './measure.js';
import { BENCH_ROLE, type Seeded } from './seed.js';

export const mappingName = (members: number) => `Mapping a ${members}-member group to a role`;

/** Seconds of lookup load before the mapping, to compare its p99 with the one during the mapping. */
export const BEFORE_S = 5;
const BEFORE_MS = BEFORE_S * 1000;

/** What a run against the server needs: the server, the admin token, the seeded data. */
export interface RolesContext {
  readonly server: Server;
  readonly adminToken: string;
  readonly seeded: Seeded;
  /** The bench's own handle on the database (Postgres only: PGlite serves scimd's process alone). */
  readonly db: Kysely<DB>;
}

/** PUT of the seeded organization's mappings: the big group to BENCH_ROLE, or none. */
async function putMapping({ server, adminToken, seeded }: RolesContext, mapped: boolean): Promise<void> {
  const res = await fetch(`${server.origin}/admin/v1/orgs/${seeded.orgId}/role-mappings`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ mappings: mapped ? [{ group: { id: seeded.bigGroup }, role: BENCH_ROLE }] : [] }),
  });
  if (!res.ok) throw new Error(`PUT role-mappings: ${res.status} ${await res.text()}`);
}

/** The feed's last position now (numbering what is waiting), read by the admin API from `after`. */
async function feedEnd({ server, adminToken }: RolesContext, after = ''): Promise<string> {
  let cursor = after;
  for (;;) {
    const res = await fetch(`${server.origin}/admin/v1/changes?limit=1000${cursor && `&after=${cursor}`}`, {
      headers: { authorization: `Bearer ${adminToken}` },
    });
    if (!res.ok) throw new Error(`feed: ${res.status} ${await res.text()}`);
    const page = (await res.json()) as { changes: unknown[]; nextCursor: string };
    if (page.changes.length === 0) return page.nextCursor;
    cursor = page.nextCursor;
  }
}

/**
 * Reads the seeded organization's user.roles_changed after `after` until `members` distinct users have
 * one that adds (`added`) or removes BENCH_ROLE, as a consumer of the feed would; returns when, and
 * the cursor after the last change read.
 */
async function readRoleChanges(
  { server, adminToken, seeded }: RolesContext,
  after: string,
  members: number,
  added: boolean,
): Promise<{ at: number; cursor: string }> {
  const seen = new Set<string>();
  let cursor = after;
  while (seen.size < members) {
    const res = await fetch(
      `${server.origin}/admin/v1/changes?after=${cursor}&orgId=${seeded.orgId}&types=user.roles_changed&limit=1000&wait=10`,
      { headers: { authorization: `Bearer ${adminToken}` } },
    );
    if (!res.ok) throw new Error(`feed: ${res.status} ${await res.text()}`);
    const page = (await res.json()) as {
      changes: { resourceId: string; data: { added: string[]; removed: string[] } }[];
      nextCursor: string;
    };
    if (page.changes.length === 0)
      throw new Error(`feed: ${seen.size} of ${members} role changes, then none`);
    for (const change of page.changes)
      if ((added ? change.data.added : change.data.removed).includes(BENCH_ROLE)) seen.add(change.resourceId);
    cursor = page.nextCursor;
  }
  return { at: performance.now(), cursor };
}

/** The big group's members holding BENCH_ROLE from it, as the product reads them. */
async function membersWithRole(db: Kysely<DB>, seeded: Seeded): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from directory.user_roles
    where organization_id = ${seeded.orgId} and role = ${BENCH_ROLE}
      and ${`group:${seeded.bigGroup}`} = any(sources)`.execute(db);
  return rows[0]!.n;
}

/**
 * The big group's members a mapping gives BENCH_ROLE: those active and not deprovisioned (the
 * round's PATCHes deactivate some).
 */
async function activeMembers(db: Kysely<DB>, seeded: Seeded): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from group_members gm
    join users u on u.org_id = gm.org_id and u.id = gm.user_id
    where gm.org_id = ${seeded.orgId} and gm.group_id = ${seeded.bigGroup}
      and u.active and u.deprovisioned_at is null`.execute(db);
  return rows[0]!.n;
}

/** Users whose memberships one PATCH removes. */
const REMOVE_AT_ONCE = 1_000;

/**
 * Removes the spare users from the big group, by SCIM (a PATCH of a value list, as Entra removes
 * members), so that the next member add puts in users not yet in it.
 */
export async function removeSpareMembers({ server, seeded }: RolesContext): Promise<void> {
  for (let i = 0; i < seeded.spare.length; i += REMOVE_AT_ONCE) {
    const res = await fetch(`${server.origin}/scim/v2/${seeded.orgId}/Groups/${seeded.bigGroup}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${seeded.token}`, 'content-type': 'application/scim+json' },
      body: JSON.stringify({
        schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
        Operations: [
          {
            op: 'remove',
            path: 'members',
            value: seeded.spare.slice(i, i + REMOVE_AT_ONCE).map((u) => ({ value: u.id })),
          },
        ],
      }),
    });
    if (!res.ok) throw new Error(`PATCH remove members: ${res.status} ${await res.text()}`);
  }
}

/**
 * Numbers what the feed holds after `cursor` and vacuums what a mapping rewrote, so that what it
 * leaves behind is not left to the work after it.
 */
async function settle(context: RolesContext, cursor: string): Promise<void> {
  await feedEnd(context, cursor);
  await sql`vacuum analyze users, user_roles, group_members, changes`.execute(context.db);
}

/**
 * Takes the mapping away and waits until the feed has the role taken from every holder. Returns the
 * seconds until the PUT's answer and until the feed's.
 */
async function unmap(context: RolesContext): Promise<{ put: number; feed: number }> {
  const after = await feedEnd(context);
  const holders = await membersWithRole(context.db, context.seeded);
  const started = performance.now();
  await putMapping(context, false);
  const answered = performance.now();
  const read = await readRoleChanges(context, after, holders, false);
  await settle(context, read.cursor);
  return { put: (answered - started) / 1000, feed: (read.at - started) / 1000 };
}

export interface MappingFigures {
  members: number;
  /** From the PUT to its answer: every member's role committed, in the read model. */
  putSeconds: number;
  /** From the PUT until a reader of the feed has every member's user.roles_changed. */
  feedSeconds: number;
  /** The members with the role in directory.user_roles when the PUT answered. */
  inReadModel: number;
  /** The other organization's lookup: its p99 in the seconds before the mapping, and during it. */
  lookup: { beforeP99Ms: number; duringP99Ms: number; duringP50Ms: number; during: number; errors: number };
  /** Taking the mapping away again, PUT and feed, in seconds. */
  unmap: { putSeconds: number; feedSeconds: number };
}

const percentile = (sorted: readonly number[], q: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!;

/**
 * Maps the big group to BENCH_ROLE while `lookup` (another organization's, with its token) runs from
 * CONNECTIONS connections: BEFORE_MS of it first, then the PUT, then until a reader of the feed has
 * every member's change. Each lookup's latency is kept with the time it was answered. Then, with
 * the lookups stopped and the mapping settled, `whileMapped`; then the mapping is taken away.
 */
export async function measureMapping(
  context: RolesContext,
  lookup: { name: string; token: string; setup: Setup },
  whileMapped: () => Promise<void>,
): Promise<MappingFigures> {
  const { server, seeded, db } = context;
  const members = await activeMembers(db, seeded);
  await warmUp(server, lookup.token, lookup.setup, lookup.name);
  const answers: { at: number; ms: number }[] = [];
  let errors = 0;
  let finished: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    finished = resolve;
  });
  // With a callback, autocannon answers its instance, whose responses are heard one by one.
  const load = autocannon(
    {
      url: server.origin,
      connections: CONNECTIONS,
      // Stopped once the feed has every change; a bound in case it never does.
      duration: 600,
      headers: { authorization: `Bearer ${lookup.token}` },
      requests: [{ setupRequest: lookup.setup as never }],
    },
    () => finished(),
  );
  load.on('response', (_client, status, _bytes, ms) => {
    answers.push({ at: performance.now(), ms });
    if (status < 200 || status >= 300) errors++;
  });
  try {
    await new Promise((resolve) => setTimeout(resolve, BEFORE_MS));
    const after = await feedEnd(context);
    const started = performance.now();
    await putMapping(context, true);
    const answered = performance.now();
    const inReadModel = await membersWithRole(db, seeded);
    const { at: read, cursor } = await readRoleChanges(context, after, members, true);
    load.stop();
    await done;
    const latencies = (from: number, to: number) =>
      answers
        .filter((a) => a.at >= from && a.at <= to)
        .map((a) => a.ms)
        .sort((a, b) => a - b);
    const before = latencies(started - BEFORE_MS, started);
    const during = latencies(started, read);
    await settle(context, cursor);
    await whileMapped();
    const away = await unmap(context);
    return {
      members,
      putSeconds: round1((answered - started) / 1000),
      feedSeconds: round1((read - started) / 1000),
      inReadModel,
      lookup: {
        beforeP99Ms: round1(percentile(before, 0.99)),
        duringP99Ms: round1(percentile(during, 0.99)),
        duringP50Ms: round1(during.length > 0 ? median(during) : 0),
        during: during.length,
        errors,
      },
      unmap: { putSeconds: round1(away.put), feedSeconds: round1(away.feed) },
    };
  } finally {
    load.stop();
  }
}

const round1 = (n: number) => Math.round(n * 10) / 10;
