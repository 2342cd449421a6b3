import { type Kysely, sql } from 'kysely';

// Filters and cursor paging (issue 3).
export async function up(db: Kysely<unknown>): Promise<void> {
  // The lower-cased `value`s of a multi-valued attribute, for a GIN index that answers
  // `emails[type eq "work"].value eq "x"` (Entra's matching filter) without scanning the organization.
  await sql`
    create function scim_ci_values(items jsonb) returns text[]
    language sql immutable parallel safe
    as $$
      select coalesce(array_agg(lower(e ->> 'value')), '{}')
      from jsonb_array_elements(case when jsonb_typeof(items) = 'array' then items else '[]'::jsonb end) as e
    $$`.execute(db);
  await sql`create index users_emails_ci on users using gin (scim_ci_values(data -> 'emails'))`.execute(db);

  // Each organization signs its cursors with a key of its own: a cursor from another organization,
  // or one a client made up, fails the check (RFC 9865 §7).
  await sql`alter table orgs add column cursor_key bytea not null
    default sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8'))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table orgs drop column cursor_key`.execute(db);
  await sql`drop index users_emails_ci`.execute(db);
  await sql`drop function scim_ci_values(jsonb)`.execute(db);
}
