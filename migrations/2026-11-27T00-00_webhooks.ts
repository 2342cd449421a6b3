import { type Kysely, sql } from 'kysely';

// Webhook endpoints and their deliveries. An endpoint follows the change feed from the position it
// was created at (`feed_position`); each change it subscribes to becomes a delivery, sent until the
// receiver accepts it. The process holding an endpoint's lease is the only one sending its deliveries.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table webhook_endpoints (
      id uuid primary key,
      org_id uuid references orgs (id) on delete cascade,
      url text not null,
      events text[] not null,
      description text not null default '',
      state text not null default 'active' check (state in ('active', 'inactive', 'disabled')),
      disabled_reason text,
      secret_box bytea not null,
      feed_position bigint not null,
      leased_by text,
      leased_until timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`.execute(db);

  await sql`
    create table webhook_deliveries (
      endpoint_id uuid not null references webhook_endpoints (id) on delete cascade,
      position bigint not null,
      change_id bigint not null,
      resource_id uuid not null,
      type text not null,
      state text not null default 'pending' check (state in ('pending', 'delivered', 'expired')),
      attempts integer not null default 0,
      next_attempt_at timestamptz not null,
      last_status integer,
      last_error text,
      last_latency_ms integer,
      delivered_at timestamptz,
      created_at timestamptz not null,
      primary key (endpoint_id, position)
    )`.execute(db);
  // What is due, in feed order, and whether an earlier delivery of the same resource is still pending.
  await sql`create index webhook_deliveries_pending on webhook_deliveries (endpoint_id, position) where state = 'pending'`.execute(
    db,
  );
  await sql`create index webhook_deliveries_pending_resource on webhook_deliveries (endpoint_id, resource_id, position) where state = 'pending'`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table webhook_deliveries, webhook_endpoints`.execute(db);
}
