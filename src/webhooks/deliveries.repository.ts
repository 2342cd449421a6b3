// SQL of webhook deliveries: what a wave sends and records, what is due, the delivery log, redelivery,
// and the backlog metrics show. Rows never leave this module.
import { type Kysely, type Selectable, sql } from 'kysely';
import type { StoredChange } from '../changes/changes.js';
import { rowToChange } from '../changes/changes.repository.js';
import type { DB, WebhookDeliveriesTable } from '../db/tables.js';

/** Of `resourceIds`, those with a delivery to this endpoint still pending: their changes queue behind it. */
export async function resourcesPending(
  db: Kysely<DB>,
  endpointId: string,
  resourceIds: readonly string[],
): Promise<Set<string>> {
  if (resourceIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select('resource_id')
    .distinct()
    .where('endpoint_id', '=', endpointId)
    .where('state', '=', 'pending')
    .where('resource_id', 'in', resourceIds)
    .execute();
  return new Set(rows.map((r) => r.resource_id));
}

/** A change taken from the feed in a wave: sent (with its outcome), or queued behind its resource. */
export interface Taken {
  readonly change: StoredChange;
  readonly attempt: Attempt | undefined;
}

/**
 * Records a wave in one statement: moves the endpoint's feed position from `from` to `through` (only
 * while this process holds the lease and nobody moved it), writes a row for each change taken
 * (delivered, to retry, or queued), and what each retry came to. False when the lease was lost: then
 * nothing is recorded, and whoever holds the endpoint sends those changes again.
 */
export async function recordWave(
  db: Kysely<DB>,
  endpointId: string,
  holder: string,
  move: { from: bigint; through: bigint },
  taken: readonly Taken[],
  retries: readonly Attempt[],
): Promise<boolean> {
  const takenRows = taken.map(({ change, attempt }) => ({
    position: change.cursor,
    change_id: change.id,
    resource_id: change.resourceId,
    type: change.type,
    state: attempt === undefined || attempt.outcome === 'retry' ? 'pending' : attempt.outcome,
    attempts: attempt ? 1 : 0,
    retry_in: attempt?.retryInMs ?? 0,
    status: attempt?.status ?? null,
    error: attempt?.error ?? null,
    latency: attempt?.latencyMs ?? null,
  }));
  const retriedRows = retries.map((a) => ({
    position: a.position.toString(),
    outcome: a.outcome,
    status: a.status,
    latency: a.latencyMs,
    error: a.error,
    retry_in: a.retryInMs ?? 0,
  }));
  // One text for every wave, whatever its size: the rows go as JSON.
  const { rows } = await sql<{ recorded: boolean }>`
    with moved as (
      update webhook_endpoints set feed_position = ${move.through.toString()}::bigint
      where id = ${endpointId} and leased_by = ${holder} and feed_position = ${move.from.toString()}::bigint
      returning id),
    taken as (
      insert into webhook_deliveries (endpoint_id, position, change_id, resource_id, type, state, attempts,
        next_attempt_at, last_status, last_error, last_latency_ms, delivered_at, created_at)
      select moved.id, v.position, v.change_id, v.resource_id, v.type, v.state, v.attempts,
        now() + v.retry_in * interval '1 millisecond', v.status, v.error, v.latency,
        case when v.state = 'delivered' then now() end, now()
      from moved cross join jsonb_to_recordset(${JSON.stringify(takenRows)}::jsonb)
        as v(position bigint, change_id bigint, resource_id uuid, type text, state text, attempts integer,
          retry_in bigint, status integer, error text, latency integer)
      on conflict (endpoint_id, position) do nothing),
    retried as (
      update webhook_deliveries d set
        attempts = d.attempts + 1,
        state = case when v.outcome = 'retry' then 'pending' else v.outcome end,
        last_status = v.status, last_latency_ms = v.latency, last_error = v.error,
        delivered_at = case when v.outcome = 'delivered' then now() else d.delivered_at end,
        next_attempt_at = case when v.outcome = 'retry' then now() + v.retry_in * interval '1 millisecond' else d.next_attempt_at end
      from moved, jsonb_to_recordset(${JSON.stringify(retriedRows)}::jsonb)
        as v(position bigint, outcome text, status integer, latency integer, error text, retry_in bigint)
      where d.endpoint_id = moved.id and d.position = v.position)
    select exists (select 1 from moved) as recorded`.execute(db);
  return rows[0]!.recorded;
}

export interface DueDelivery {
  readonly position: bigint;
  readonly attempts: number;
  readonly change: StoredChange | undefined;
}

/**
 * Up to `limit` pending deliveries (retries, and changes queued behind their resource's) whose time has
 * come, in feed order, leaving out any whose resource has an earlier delivery still pending: two
 * changes of one resource never go out of order.
 */
export async function dueDeliveries(
  db: Kysely<DB>,
  endpointId: string,
  limit: number,
): Promise<DueDelivery[]> {
  const { rows } = await sql<{
    position: string;
    attempts: number;
    seq: string | null;
    org_id: string;
    type: string;
    resource_type: string;
    resource_id: string;
    occurred_at: Date;
    attributes: string[] | null;
    mode: string | null;
    data_json: string;
  }>`
    select d.position::text, d.attempts, c.seq, c.org_id, c.type, c.resource_type, c.resource_id, c.occurred_at,
      c.attributes, c.mode, c.data::text as data_json
    from webhook_deliveries d
    left join changes c on c.position = d.position
    where d.endpoint_id = ${endpointId} and d.state = 'pending' and d.next_attempt_at <= now()
      and not exists (
        select 1 from webhook_deliveries e
        where e.endpoint_id = d.endpoint_id and e.state = 'pending' and e.resource_id = d.resource_id
          and e.position < d.position)
    order by d.position
    limit ${limit}`.execute(db);
  return rows.map((r) => ({
    position: BigInt(r.position),
    attempts: r.attempts,
    change: r.seq === null ? undefined : rowToChange({ ...r, seq: r.seq, position: r.position }),
  }));
}

export interface Attempt {
  readonly position: bigint;
  readonly status: number | null;
  readonly latencyMs: number;
  readonly error: string | null;
  /** When to try again; undefined when delivered (or given up as expired). */
  readonly retryInMs?: number;
  readonly outcome: 'delivered' | 'retry' | 'expired';
}

export interface DeliveryView {
  readonly position: string;
  readonly changeId: string;
  readonly type: string;
  readonly resourceId: string;
  readonly state: string;
  readonly attempts: number;
  readonly lastStatus: number | null;
  readonly lastError: string | null;
  readonly lastLatencyMs: number | null;
  readonly nextAttemptAt: string | null;
  readonly deliveredAt: string | null;
  readonly createdAt: string;
}

const toDelivery = (row: Selectable<WebhookDeliveriesTable>): DeliveryView => ({
  position: row.position,
  changeId: row.change_id,
  type: row.type,
  resourceId: row.resource_id,
  state: row.state,
  attempts: row.attempts,
  lastStatus: row.last_status,
  lastError: row.last_error,
  lastLatencyMs: row.last_latency_ms,
  nextAttemptAt: row.state === 'pending' ? row.next_attempt_at.toISOString() : null,
  deliveredAt: row.delivered_at?.toISOString() ?? null,
  createdAt: row.created_at.toISOString(),
});

/** The endpoint's deliveries, newest first, before `before` (a position) when given. */
export async function listDeliveries(
  db: Kysely<DB>,
  endpointId: string,
  options: { limit: number; before?: bigint; state?: string },
): Promise<DeliveryView[]> {
  let query = db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', endpointId);
  if (options.before !== undefined) query = query.where('position', '<', options.before.toString());
  if (options.state) query = query.where('state', '=', options.state);
  const rows = await query.orderBy('position', 'desc').limit(options.limit).execute();
  return rows.map(toDelivery);
}

/** Sends a delivery again, from now: whatever its state. */
export async function redeliver(
  db: Kysely<DB>,
  endpointId: string,
  position: bigint,
): Promise<DeliveryView | undefined> {
  const row = await db
    .updateTable('webhook_deliveries')
    .set({ state: 'pending', next_attempt_at: new Date(), delivered_at: null })
    .where('endpoint_id', '=', endpointId)
    .where('position', '=', position.toString())
    .returningAll()
    .executeTakeFirst();
  return row && toDelivery(row);
}

/** Per endpoint: deliveries pending, and the oldest of them. */
export async function pendingOf(
  db: Kysely<DB>,
  endpointId: string,
): Promise<{ pending: number; oldest: Date | null }> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => [eb.fn.countAll<string>().as('pending'), eb.fn.min('created_at').as('oldest')])
    .where('endpoint_id', '=', endpointId)
    .where('state', '=', 'pending')
    .executeTakeFirstOrThrow();
  return { pending: Number(row.pending), oldest: (row.oldest as Date | null) ?? null };
}

/** An endpoint's backlog, as metrics show it. */
export interface WebhookBacklog {
  id: string;
  lag: string;
  pending: string;
  failing: string;
}

/** Each endpoint's lag behind the feed, and its pending and failing deliveries. */
export async function webhookBacklog(db: Kysely<DB>): Promise<WebhookBacklog[]> {
  const { rows } = await sql<WebhookBacklog>`
    select e.id, greatest(f.last_position - e.feed_position, 0) as lag,
      count(d.position) as pending, count(d.position) filter (where d.attempts > 0) as failing
    from webhook_endpoints e cross join change_feed f
    left join webhook_deliveries d on d.endpoint_id = e.id and d.state = 'pending'
    group by e.id, f.last_position, e.feed_position`.execute(db);
  return rows;
}
