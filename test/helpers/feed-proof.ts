// The change feed's hard part, proven under load: many writers (users, their attributes, group
// members; across organizations) commit in whatever order the database lets them, while a reader
// follows the feed by cursor with long polls. What the reader saw must be exactly what committed,
// each change once with one position, in an order that never contradicts the order of commits.
import { expect } from 'vitest';
import type { Json } from './scim.js';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

interface Reply {
  readonly status: number;
  readonly body: Json;
}

/** An organization's SCIM API, and the admin API's feed, wherever they are served. */
export interface ProofClient {
  /** `path` below the organization's base URL, through the writer numbered `writer` (a process, say). */
  scim(orgId: string, writer: number, method: string, path: string, body?: unknown): Promise<Reply>;
  changes(query: string): Promise<Reply>;
}

/** A write that committed, with what its change must show, and when it began and was answered. */
interface Committed {
  readonly key: string;
  readonly orgId: string;
  readonly started: number;
  readonly answered: number;
}

export interface ProofOptions {
  readonly orgIds: readonly string[];
  /** How many writes run at once. */
  readonly concurrency: number;
  /** Writes per writer. */
  readonly writesEach: number;
  /** How many processes (or apps) the writes are spread over. */
  readonly writers?: number;
}

/** Runs the writers and a follower at once; checks the follower's changes against the commits. */
export async function proveFeed(client: ProofClient, options: ProofOptions): Promise<{ changes: number }> {
  const start = await feedEnd(client);
  const committed: Committed[] = [];
  let writing = true;
  const seen: Json[] = [];
  const follower = (async () => {
    let after = start;
    // Follows until the writers are done and a read finds nothing more.
    for (;;) {
      const stillWriting = writing;
      const res = await client.changes(`after=${after}&limit=200&wait=${stillWriting ? 2 : 0}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      seen.push(...res.body.changes);
      after = res.body.nextCursor;
      if (!stillWriting && res.body.changes.length === 0) return;
    }
  })();

  const writers = options.writers ?? 1;
  let next = 0;
  const worker = async (n: number) => {
    const orgId = options.orgIds[n % options.orgIds.length]!;
    const via = (k: number) => (n + k) % writers;
    const record = async (key: (body: Json) => string | undefined, call: () => Promise<Reply>) => {
      const started = performance.now();
      const res = await call();
      const answered = performance.now();
      if (res.status >= 300) return res;
      const k = key(res.body);
      if (k) committed.push({ key: k, orgId, started, answered });
      return res;
    };
    const group = await record(
      (b) => `group.created ${b.id}`,
      () =>
        client.scim(orgId, via(0), 'POST', '/Groups', { schemas: [GROUP], displayName: `g-${n}-${next++}` }),
    );
    expect(group.status, JSON.stringify(group.body)).toBe(201);
    for (let i = 0; i < options.writesEach; i++) {
      const userName = `u-${n}-${i}-${next++}`;
      const created = await record(
        (b) => `user.created ${b.id}`,
        () => client.scim(orgId, via(i), 'POST', '/Users', { schemas: [USER], userName, active: true }),
      );
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const id = created.body.id as string;
      // A conflict commits nothing: it must leave nothing in the feed.
      const refused = await client.scim(orgId, via(i + 1), 'POST', '/Users', { schemas: [USER], userName });
      expect(refused.status).toBe(409);
      await record(
        () => `user.updated ${id} title-${i}`,
        () =>
          client.scim(orgId, via(i + 1), 'PATCH', `/Users/${id}`, {
            schemas: [PATCH_OP],
            Operations: [{ op: 'replace', path: 'title', value: `title-${i}` }],
          }),
      );
      await record(
        () => `group.members_added ${group.body.id} ${id}`,
        () =>
          client.scim(orgId, via(i + 2), 'PATCH', `/Groups/${group.body.id}`, {
            schemas: [PATCH_OP],
            Operations: [{ op: 'add', path: 'members', value: [{ value: id }] }],
          }),
      );
      if (i % 3 === 2) {
        await record(
          () => `group.members_removed ${group.body.id} ${id}`,
          () =>
            client.scim(orgId, via(i), 'PATCH', `/Groups/${group.body.id}`, {
              schemas: [PATCH_OP],
              Operations: [{ op: 'remove', path: `members[value eq "${id}"]` }],
            }),
        );
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency }, (_, n) => worker(n)));
  } finally {
    writing = false;
  }
  await follower;

  // Each change once, with one position.
  expect(new Set(seen.map((c) => c.id)).size).toBe(seen.length);
  expect(new Set(seen.map((c) => c.cursor)).size).toBe(seen.length);
  const positions = seen.map((c) => BigInt(c.cursor));
  for (let i = 1; i < positions.length; i++) expect(positions[i]! > positions[i - 1]!).toBe(true);

  // Exactly what committed: nothing missing, nothing extra.
  const keyOf = (c: Json): string => {
    if (c.type === 'user.updated') return `${c.type} ${c.resourceId} ${c.data.title}`;
    if (c.type.startsWith('group.members_')) return `${c.type} ${c.resourceId} ${c.data.userIds.join(',')}`;
    return `${c.type} ${c.resourceId}`;
  };
  const ofTheseOrgs = seen.filter((c) => options.orgIds.includes(c.orgId));
  expect(ofTheseOrgs.map(keyOf).sort()).toEqual(committed.map((c) => c.key).sort());

  // A write answered before another began has the earlier position, in any organization.
  const position = new Map(ofTheseOrgs.map((c) => [keyOf(c), BigInt(c.cursor)]));
  const byAnswer = [...committed].sort((x, y) => x.answered - y.answered);
  const byStart = [...committed].sort((x, y) => x.started - y.started);
  // For each write, the latest position among writes answered before it began must be below its own.
  let j = 0;
  let highest = -1n;
  for (const write of byStart) {
    while (j < byAnswer.length && byAnswer[j]!.answered < write.started) {
      const p = position.get(byAnswer[j]!.key)!;
      if (p > highest) highest = p;
      j++;
    }
    expect(
      position.get(write.key)! > highest,
      `${write.key} is numbered before a write that committed first`,
    ).toBe(true);
  }
  return { changes: ofTheseOrgs.length };
}

/** The cursor of the feed's newest change. */
async function feedEnd(client: ProofClient): Promise<string> {
  let after: string | undefined;
  for (;;) {
    const res = await client.changes(`limit=1000${after === undefined ? '' : `&after=${after}`}`);
    expect(res.status).toBe(200);
    if (res.body.changes.length === 0) return res.body.nextCursor;
    after = res.body.nextCursor;
  }
}
