import { type Kysely, sql } from 'kysely';

// Sync health: what each organization's IdP asked and how it went, aggregated in the process and
// written in batches (src/health/sync-activity.ts), never one row per request.
export async function up(db: Kysely<unknown>): Promise<void> {
  // Requests per organization, token (null: a credential that matched none), minute, operation and
  // outcome.
  await sql`
    create table sync_counts (
      org_id uuid not null references orgs (id) on delete cascade,
      token_id uuid,
      minute timestamptz not null,
      operation text not null,
      outcome text not null,
      requests integer not null,
      last_at timestamptz not null,
      constraint sync_counts_key unique nulls not distinct (org_id, minute, token_id, operation, outcome)
    )`.execute(db);
  await sql`create index sync_counts_minute on sync_counts (minute)`.execute(db);

  // The recent failed requests, as an IT admin reads them: no query string, no attribute value.
  await sql`
    create table sync_failures (
      id bigint generated always as identity primary key,
      org_id uuid not null references orgs (id) on delete cascade,
      token_id uuid,
      at timestamptz not null,
      method text not null,
      path text not null,
      status integer not null,
      scim_type text,
      detail text not null,
      request_id text not null
    )`.execute(db);
  await sql`create index sync_failures_org on sync_failures (org_id, id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table sync_failures, sync_counts`.execute(db);
}
