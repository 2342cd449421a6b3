import { type Kysely, sql } from 'kysely';

// A failed request keeps why it failed as a code (the error's reason: an expired token, group sync
// off, an attribute the schema lacks), so a hint is chosen by it, not by the wording of its detail.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table sync_failures add column reason text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table sync_failures drop column reason`.execute(db);
}
