// SQL of the change feed: numbering committed changes, reading them by position, and removing the
// ones past retention. Changes themselves are written by triggers (migrations/…_change-feed.ts).
import { type Kysely, type Selectable, sql } from 'kysely';
import type { ChangesTable, DB } from '../db/tables.js';
import type { ChangeType, StoredChange } from './changes.js';
import { EVENT_URIS } from './changes.js';

/** How many changes one numbering takes at most. */
export const NUMBER_AT_ONCE = 10_000;

export interface FeedState {
  /** The last position handed out. */
  readonly last: bigint;
  /** How many changes this call numbered. */
  readonly numbered: number;
  /** The last position removed by retention: a cursor before it has missed changes. */
  readonly purgedThrough: bigint;
}

/**
 * Gives positions to committed changes that have none, in the order they were written (NUMBER_AT_ONCE
 * at most), and tells other processes by NOTIFY when there were any.
 */
export async function numberChanges(db: Kysely<DB>): Promise<FeedState> {
  const { rows } = await sql<{ last_position: string; numbered: number; purged_through: string }>`
    select * from scim_number_changes(${NUMBER_AT_ONCE})`.execute(db);
  const row = rows[0]!;
  return {
    last: BigInt(row.last_position),
    numbered: row.numbered,
    purgedThrough: BigInt(row.purged_through),
  };
}

export interface ChangeFilter {
  readonly orgId?: string | undefined;
  readonly types?: readonly ChangeType[] | undefined;
}

/** Changes with a position in (`after`, `through`], in position order, `limit` at most. */
export async function readChanges(
  db: Kysely<DB>,
  after: bigint,
  through: bigint,
  filter: ChangeFilter,
  limit: number,
): Promise<StoredChange[]> {
  let query = db
    .selectFrom('changes')
    .select([
      'seq',
      'position',
      'org_id',
      'type',
      'resource_type',
      'resource_id',
      'occurred_at',
      'attributes',
      'mode',
      sql<string>`data::text`.as('data_json'),
    ])
    .where('position', '>', after.toString())
    .where('position', '<=', through.toString());
  if (filter.orgId) query = query.where('org_id', '=', filter.orgId);
  if (filter.types) query = query.where('type', 'in', filter.types);
  const rows = await query.orderBy('position').limit(limit).execute();
  return rows.map(rowToChange);
}

export function rowToChange(
  row: Omit<Selectable<ChangesTable>, 'data' | 'written' | 'previous'> & { data_json: string },
): StoredChange {
  const type = row.type as ChangeType;
  return {
    id: row.seq,
    cursor: row.position ?? '',
    orgId: row.org_id,
    type,
    resourceType: row.resource_type as StoredChange['resourceType'],
    resourceId: row.resource_id,
    occurredAt: row.occurred_at.toISOString(),
    eventUri: EVENT_URIS[type] ?? null,
    ...(row.attributes ? { changedAttributes: row.attributes } : {}),
    ...(row.mode ? { mode: row.mode as StoredChange['mode'] } : {}),
    dataJson: row.data_json,
  };
}

/** How many numbered changes one purge statement removes at most. */
const PURGE_AT_ONCE = 10_000;

/**
 * Removes numbered changes that occurred before `cutoff`, oldest position first, stopping at the
 * first newer one so that what is removed is always everything up to a position; returns how many.
 */
export async function purgeChanges(db: Kysely<DB>, cutoff: Date): Promise<number> {
  let total = 0;
  for (;;) {
    const { rows } = await sql<{ removed: number }>`
      with head as (
        select position, occurred_at from changes
        where position is not null order by position limit ${PURGE_AT_ONCE}
      ), stop as (
        select coalesce(min(position), 9223372036854775807) as position from head where occurred_at >= ${cutoff}
      ), removed as (
        delete from changes c using head, stop
        where c.position = head.position and head.position < stop.position
        returning c.position
      ), marked as (
        update change_feed set purged_through = greatest(purged_through, (select max(position) from removed))
        where exists (select 1 from removed)
      )
      select count(*)::integer as removed from removed`.execute(db);
    const removed = rows[0]!.removed;
    total += removed;
    if (removed < PURGE_AT_ONCE) return total;
  }
}

/** An organization's latest numbered changes, newest first, without their data. */
export async function latestChanges(db: Kysely<DB>, orgId: string, limit: number) {
  const rows = await db
    .selectFrom('changes')
    .select(['position', 'type', 'resource_id', 'occurred_at'])
    .where('org_id', '=', orgId)
    .where('position', 'is not', null)
    .orderBy('position', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    position: r.position!,
    type: r.type,
    resourceId: r.resource_id,
    occurredAt: r.occurred_at,
  }));
}
