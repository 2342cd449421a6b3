import { type Kysely, sql } from 'kysely';

// Statistics on lower(user_name): the unique index on it is partial, and Postgres keeps no statistics
// for a partial index's expressions. Without them a userName filter was estimated at 0.5% of the
// organization, and at a million users Postgres walked the creation-order index for the first match.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create statistics users_lower_user_name on (lower(user_name)) from users`.execute(db);
  await sql`analyze users`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop statistics users_lower_user_name`.execute(db);
}
