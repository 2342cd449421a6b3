import { type Kysely, sql } from 'kysely';

// The creation-order index carries whether a user is deprovisioned, so that a walk to a deep
// startIndex (which lists only users still provisioned) reads the index alone, not every row's page
// of the table. deprovisioned_at already decides whether an update is heap-only (it is the predicate
// of the userName index), so carrying it changes no update's cost.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`drop index users_org_created`.execute(db);
  await sql`create index users_org_created on users (org_id, created_at, id) include (deprovisioned_at)`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index users_org_created`.execute(db);
  await sql`create index users_org_created on users (org_id, created_at, id)`.execute(db);
}
