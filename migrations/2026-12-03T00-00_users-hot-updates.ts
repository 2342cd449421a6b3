import { type Kysely, sql } from 'kysely';

// A user's lower-cased email values and its values of organizations' own extensions are stored
// columns, generated from its attributes, and the GIN indexes read those columns instead of
// expressions on `data`. Postgres writes an update as heap-only (HOT: no new index entry at all)
// only when no column an index reads has changed; an index on an expression of `data` made every
// update of a user write an entry in every index of the table. Now an update that leaves the user's
// userName, externalId, emails and own extension values as they were (a new title, a deactivation,
// Okta's push of a whole profile) is heap-only, when the page has room for the new version: pages
// keep a tenth of their space for it (fillfactor 90).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table users
    add column email_values jsonb generated always as (scim_lower_values(data -> 'emails')) stored,
    add column extension_values jsonb generated always as (scim_extension_values(data)) stored`.execute(db);
  await sql`drop index users_emails_ci`.execute(db);
  await sql`create index users_emails_ci on users using gin (email_values jsonb_path_ops)`.execute(db);
  // The column's own statistics tell the planner how rare a value is, as the expression's did.
  await sql`drop statistics users_extension_values_stats`.execute(db);
  await sql`drop index users_extension_values`.execute(db);
  await sql`create index users_extension_values on users
    using gin (extension_values jsonb_path_ops) where extension_values <> '{}'::jsonb`.execute(db);
  await sql`alter table users set (fillfactor = 90)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table users reset (fillfactor)`.execute(db);
  await sql`drop index users_extension_values`.execute(db);
  await sql`drop index users_emails_ci`.execute(db);
  await sql`alter table users drop column email_values, drop column extension_values`.execute(db);
  await sql`create index users_emails_ci on users using gin (scim_lower_values(data -> 'emails') jsonb_path_ops)`.execute(
    db,
  );
  await sql`create index users_extension_values on users
    using gin (scim_extension_values(data) jsonb_path_ops) where scim_extension_values(data) <> '{}'::jsonb`.execute(
    db,
  );
  await sql`create statistics users_extension_values_stats on (scim_extension_values(data)) from users`.execute(
    db,
  );
}
