// SQL of sync activity: writing a batch of counts and failed requests, trimming what is past its
// keeping, and reading an organization's for its health.
import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/tables.js';

/** Requests of one organization, token, minute, operation and outcome. */
export interface CountRow {
  orgId: string;
  tokenId: string | null;
  minute: Date;
  operation: string;
  outcome: string;
  requests: number;
  lastAt: Date;
}

export interface FailureRow {
  orgId: string;
  tokenId: string | null;
  at: Date;
  method: string;
  path: string;
  status: number;
  scimType: string | null;
  detail: string;
  reason: string | null;
  requestId: string;
}

/** Failed requests kept per organization. */
export const FAILURES_KEPT = 100;
/** Counts are kept this long: a day's, and a day more for the day that just ended. */
const COUNTS_KEPT = '2 days';

/**
 * One statement for the batch: counts are added to the minute's row, failed requests appended, both
 * only for organizations that still exist. Then each organization written to keeps its newest
 * FAILURES_KEPT failures, and counts past COUNTS_KEPT go.
 */
export async function insertActivity(
  db: Kysely<DB>,
  counts: CountRow[],
  failures: FailureRow[],
): Promise<void> {
  await sql`
    with counted as (
      insert into sync_counts (org_id, token_id, minute, operation, outcome, requests, last_at)
      select c.org_id, c.token_id, c.minute, c.operation, c.outcome, c.requests, c.last_at
      from jsonb_to_recordset(${JSON.stringify(counts.map(countJson))}::jsonb) as c(
        org_id uuid, token_id uuid, minute timestamptz, operation text, outcome text, requests integer,
        last_at timestamptz)
      where exists (select 1 from orgs o where o.id = c.org_id)
      on conflict on constraint sync_counts_key do update
      set requests = sync_counts.requests + excluded.requests,
        last_at = greatest(sync_counts.last_at, excluded.last_at)
    )
    insert into sync_failures (org_id, token_id, at, method, path, status, scim_type, detail, reason, request_id)
    select f.org_id, f.token_id, f.at, f.method, f.path, f.status, f.scim_type, f.detail, f.reason, f.request_id
    from jsonb_to_recordset(${JSON.stringify(failures.map(failureJson))}::jsonb) as f(
      org_id uuid, token_id uuid, at timestamptz, method text, path text, status integer, scim_type text,
      detail text, reason text, request_id text)
    where exists (select 1 from orgs o where o.id = f.org_id)
    order by f.at`.execute(db);
  const failedOrgs = [...new Set(failures.map((f) => f.orgId))];
  if (failedOrgs.length > 0) {
    await sql`
      delete from sync_failures f
      using (
        select t.org_id,
          (select s.id from sync_failures s where s.org_id = t.org_id order by s.id desc offset ${FAILURES_KEPT} limit 1) as cut
        from unnest(${failedOrgs}::uuid[]) as t(org_id)
      ) c
      where f.org_id = c.org_id and f.id <= c.cut`.execute(db);
  }
  await sql`delete from sync_counts where minute < now() - ${COUNTS_KEPT}::interval`.execute(db);
}

const countJson = (c: CountRow) => ({
  org_id: c.orgId,
  token_id: c.tokenId,
  minute: c.minute.toISOString(),
  operation: c.operation,
  outcome: c.outcome,
  requests: c.requests,
  last_at: c.lastAt.toISOString(),
});

const failureJson = (f: FailureRow) => ({
  org_id: f.orgId,
  token_id: f.tokenId,
  at: f.at.toISOString(),
  method: f.method,
  path: f.path,
  status: f.status,
  scim_type: f.scimType,
  detail: f.detail,
  reason: f.reason,
  request_id: f.requestId,
});

/**
 * An organization's requests by token, operation and outcome: over the day before `now` and the hour
 * before it, with the newest of each.
 */
export async function recentCounts(db: Kysely<DB>, orgId: string, now: Date) {
  const hourAgo = new Date(now.getTime() - 3_600_000);
  return db
    .selectFrom('sync_counts')
    .select(['token_id', 'operation', 'outcome'])
    .select((eb) => [
      eb.fn.sum<string>('requests').as('day'),
      sql<string>`coalesce(sum(requests) filter (where minute >= ${hourAgo}), 0)`.as('hour'),
      eb.fn.max('last_at').as('last_at'),
    ])
    .where('org_id', '=', orgId)
    .where('minute', '>=', new Date(now.getTime() - 24 * 3_600_000))
    .groupBy(['token_id', 'operation', 'outcome'])
    .execute();
}

/** The organization's newest failed requests, newest first. */
export async function recentFailures(db: Kysely<DB>, orgId: string, limit: number) {
  return db
    .selectFrom('sync_failures')
    .select(['token_id', 'at', 'method', 'path', 'status', 'scim_type', 'detail', 'reason', 'request_id'])
    .where('org_id', '=', orgId)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}
