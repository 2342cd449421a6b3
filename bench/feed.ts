// The change feed's figures: what writing changes costs a write (the same writes with the feed's
// triggers off, in the same round), how fast 100,000 changes are read by cursor, and how long a
// waiting long poll takes to hear of a write.
import { type Kysely, sql } from 'kysely';
import type { DB } from '../src/db/tables.js';
import type { Server } from './measure.js';
import type { Seeded } from './seed.js';

export const FEED_OFF = ', feed off';
/** How many changes the read scenario reads. */
export const FEED_CHANGES = 100_000;

/**
 * Writes FEED_CHANGES user.updated changes, one per seeded user, in one statement (through the
 * triggers, as SCIM writes do); returns the cursor before them.
 */
export async function writeFeedChanges(db: Kysely<DB>, seeded: Seeded): Promise<string> {
  await sql`truncate changes`.execute(db);
  const { rows } = await sql<{ last: string }>`select last_position::text as last from change_feed`.execute(
    db,
  );
  await sql`
    update users u set data = jsonb_set(u.data, '{title}', to_jsonb('Feed ' || u.id::text))
    from (select id from users where org_id = ${seeded.orgId} order by created_at limit ${FEED_CHANGES}) s
    where u.org_id = ${seeded.orgId} and u.id = s.id`.execute(db);
  return rows[0]!.last;
}

export interface FeedRead {
  changes: number;
  seconds: number;
  perSecond: number;
}

/** Reads every change after `after` in pages of 1,000, as a consumer catching up would. */
export async function readFeed(server: Server, adminToken: string, after: string): Promise<FeedRead> {
  const started = performance.now();
  let changes = 0;
  for (let cursor = after; ; ) {
    const res = await fetch(`${server.origin}/admin/v1/changes?after=${cursor}&limit=1000`, {
      headers: { authorization: `Bearer ${adminToken}` },
    });
    if (!res.ok) throw new Error(`feed read: ${res.status} ${await res.text()}`);
    const page = (await res.json()) as { changes: unknown[]; nextCursor: string };
    changes += page.changes.length;
    if (page.changes.length === 0) break;
    cursor = page.nextCursor;
  }
  const seconds = (performance.now() - started) / 1000;
  return { changes, seconds: Math.round(seconds * 100) / 100, perSecond: Math.round(changes / seconds) };
}

export interface FeedLatency {
  samples: number;
  /** From the write's answer to the long poll's answer. */
  p50Ms: number;
  p99Ms: number;
}

/**
 * SAMPLES times: a long poll waits on the writes organization's feed, a POST /Users commits, and the
 * time from the POST's answer to the long poll's answer is taken.
 */
export async function feedLatency(server: Server, adminToken: string, seeded: Seeded): Promise<FeedLatency> {
  const SAMPLES = 200;
  const admin = { authorization: `Bearer ${adminToken}` };
  const end = async () => {
    let cursor = '';
    for (;;) {
      const res = await fetch(`${server.origin}/admin/v1/changes?limit=1000${cursor && `&after=${cursor}`}`, {
        headers: admin,
      });
      const page = (await res.json()) as { changes: unknown[]; nextCursor: string };
      if (page.changes.length === 0) return page.nextCursor;
      cursor = page.nextCursor;
    }
  };
  let cursor = await end();
  const latencies: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const polled = fetch(
      `${server.origin}/admin/v1/changes?after=${cursor}&orgId=${seeded.scratch.orgId}&wait=30`,
      { headers: admin },
    ).then(async (res) => ({ at: performance.now(), page: (await res.json()) as { nextCursor: string } }));
    // Let the poll reach its wait before the write.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const res = await fetch(`${server.origin}/scim/v2/${seeded.scratch.orgId}/Users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${seeded.scratch.token}`, 'content-type': 'application/scim+json' },
      body: JSON.stringify({
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
        userName: `new-latency-${Date.now()}-${i}@corp.example`,
      }),
    });
    const answered = performance.now();
    if (res.status !== 201) throw new Error(`latency POST: ${res.status}`);
    const { at, page } = await polled;
    latencies.push(Math.max(0, at - answered));
    cursor = page.nextCursor;
  }
  latencies.sort((a, b) => a - b);
  const at = (q: number) => Math.round(latencies[Math.floor(latencies.length * q)]! * 10) / 10;
  return { samples: SAMPLES, p50Ms: at(0.5), p99Ms: at(0.99) };
}
