// SQL of webhook endpoints: what the admin API changes, and the leases dispatchers hold. Rows never
// leave this module.
import { type ExpressionBuilder, type Kysely, type Selectable, sql } from 'kysely';
import { isUuid } from '../db/ids.js';
import type { DB, WebhookEndpointsTable } from '../db/tables.js';

export type EndpointState = 'active' | 'inactive' | 'disabled';

export interface StoredEndpoint {
  readonly id: string;
  readonly orgId: string | null;
  readonly url: string;
  readonly events: readonly string[];
  readonly description: string;
  readonly state: EndpointState;
  readonly disabledReason: string | null;
  readonly secretBox: Buffer;
  readonly feedPosition: bigint;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

const toEndpoint = (row: Selectable<WebhookEndpointsTable>): StoredEndpoint => ({
  id: row.id,
  orgId: row.org_id,
  url: row.url,
  events: row.events,
  description: row.description,
  state: row.state as EndpointState,
  disabledReason: row.disabled_reason,
  secretBox: row.secret_box,
  feedPosition: BigInt(row.feed_position),
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export async function insertEndpoint(
  db: Kysely<DB>,
  endpoint: {
    id: string;
    orgId: string | null;
    url: string;
    events: string[];
    description: string;
    secretBox: Buffer;
  },
  feedPosition: bigint,
  now: Date,
): Promise<StoredEndpoint> {
  const row = await db
    .insertInto('webhook_endpoints')
    .values({
      id: endpoint.id,
      org_id: endpoint.orgId,
      url: endpoint.url,
      events: endpoint.events,
      description: endpoint.description,
      secret_box: endpoint.secretBox,
      feed_position: feedPosition.toString(),
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toEndpoint(row);
}

export async function listEndpoints(db: Kysely<DB>): Promise<StoredEndpoint[]> {
  const rows = await db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toEndpoint);
}

export async function findEndpoint(db: Kysely<DB>, id: string): Promise<StoredEndpoint | undefined> {
  if (!isUuid(id)) return undefined;
  const row = await db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toEndpoint(row);
}

/** Whether a change to an endpoint changes what is sent, where, or whether. */
export function changesSending(change: {
  url?: string;
  events?: string[];
  state?: EndpointState;
  secretBox?: Buffer;
}) {
  return (
    change.url !== undefined ||
    change.events !== undefined ||
    change.state !== undefined ||
    change.secretBox !== undefined
  );
}

export async function updateEndpoint(
  db: Kysely<DB>,
  id: string,
  change: {
    url?: string;
    events?: string[];
    description?: string;
    state?: EndpointState;
    secretBox?: Buffer;
  },
  now: Date,
): Promise<StoredEndpoint | undefined> {
  if (!isUuid(id)) return undefined;
  const row = await db
    .updateTable('webhook_endpoints')
    .set({
      ...(change.url !== undefined ? { url: change.url } : {}),
      ...(change.events !== undefined ? { events: change.events } : {}),
      ...(change.description !== undefined ? { description: change.description } : {}),
      ...(change.state !== undefined ? { state: change.state, disabled_reason: null } : {}),
      ...(change.secretBox !== undefined ? { secret_box: change.secretBox } : {}),
      // What a wave in flight read no longer holds: its holder's lease ends, so that the wave is not
      // recorded and the next one reads the endpoint anew.
      ...(changesSending(change) ? { leased_by: null, leased_until: null } : {}),
      updated_at: now,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  return row && toEndpoint(row);
}

export async function deleteEndpoint(db: Kysely<DB>, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  const result = await db.deleteFrom('webhook_endpoints').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Stops sending to an endpoint, saying why (persistent failures, a 410 from the receiver). */
export async function disableEndpoint(db: Kysely<DB>, id: string, reason: string): Promise<void> {
  await db
    .updateTable('webhook_endpoints')
    .set({ state: 'disabled', disabled_reason: reason, updated_at: new Date() })
    .where('id', '=', id)
    .where('state', '=', 'active')
    .execute();
}

/** An active endpoint as a dispatcher sees it. */
export interface ServedEndpoint extends StoredEndpoint {
  /** Whether this process holds its lease (otherwise nobody does, or the lease lapsed). */
  readonly held: boolean;
  /** Whether any of its deliveries waits as a row (a retry, or a change queued behind its resource's). */
  readonly hasPending: boolean;
}

const servedColumns = (holder: string) =>
  [
    sql<boolean>`leased_by is not distinct from ${holder} and leased_until >= now()`.as('held'),
    sql<boolean>`exists (select 1 from webhook_deliveries d where d.endpoint_id = webhook_endpoints.id and d.state = 'pending')`.as(
      'has_pending',
    ),
  ] as const;

/** Active, and held by `holder`, or by nobody, or by a holder that stopped renewing. */
const servable = (holder: string) => (eb: ExpressionBuilder<DB, 'webhook_endpoints'>) =>
  eb.and([
    eb('state', '=', 'active'),
    eb.or([
      eb('leased_by', '=', holder),
      eb('leased_until', 'is', null),
      eb('leased_until', '<', sql<Date>`now()`),
    ]),
  ]);

/** The active endpoints this process holds, and those nobody holds or whose holder stopped renewing. */
export async function endpointsToServe(db: Kysely<DB>, holder: string): Promise<ServedEndpoint[]> {
  const rows = await db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .select(servedColumns(holder))
    .where(servable(holder))
    .execute();
  return rows.map((row) => ({ ...toEndpoint(row), held: row.held, hasPending: row.has_pending }));
}

/**
 * Takes or renews, for the next `leaseMs`, the active endpoints this process holds and those nobody
 * holds or whose holder stopped renewing (a process that ended).
 */
export async function leaseEndpoints(
  db: Kysely<DB>,
  holder: string,
  leaseMs: number,
): Promise<ServedEndpoint[]> {
  const rows = await db
    .updateTable('webhook_endpoints')
    .set({ leased_by: holder, leased_until: sql`now() + ${`${leaseMs} milliseconds`}::interval` })
    .where(servable(holder))
    .returningAll()
    .returning(servedColumns(holder))
    .execute();
  return rows.map((row) => ({ ...toEndpoint(row), held: true, hasPending: row.has_pending }));
}

/** Lets go of this process's endpoints (a graceful stop), so another takes them at once. */
export async function releaseEndpoints(db: Kysely<DB>, holder: string): Promise<void> {
  await db
    .updateTable('webhook_endpoints')
    .set({ leased_by: null, leased_until: null })
    .where('leased_by', '=', holder)
    .execute();
}
