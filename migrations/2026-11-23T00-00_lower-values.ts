import { type Kysely, sql } from 'kysely';

// The emails index holds jsonb from an inlinable SQL function: every INSERT and UPDATE computes it,
// and a PL/pgSQL function with a subquery set up an executor for each of those statements.
export async function up(db: Kysely<unknown>): Promise<void> {
  // The lower-cased `value`s of a multi-valued attribute, as a jsonb array (empty unless an array).
  // Lower-casing the JSON text lower-cases the values as lower() does; the keys are already canonical.
  await sql`
    create function scim_lower_values(items jsonb) returns jsonb
    language sql immutable parallel safe
    as $$
      select case when jsonb_typeof(items) = 'array'
        then jsonb_path_query_array(lower(items::text)::jsonb, '$[*].value')
        else '[]'::jsonb end
    $$`.execute(db);
  await sql`drop index users_emails_ci`.execute(db);
  await sql`drop function scim_ci_values(jsonb)`.execute(db);
  await sql`create index users_emails_ci on users
    using gin (scim_lower_values(data -> 'emails') jsonb_path_ops)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index users_emails_ci`.execute(db);
  await sql`drop function scim_lower_values(jsonb)`.execute(db);
  await sql`
    create function scim_ci_values(items jsonb) returns text[]
    language plpgsql immutable parallel safe
    as $$
    begin
      return (
        select coalesce(array_agg(lower(e ->> 'value')), '{}')
        from jsonb_array_elements(case when jsonb_typeof(items) = 'array' then items else '[]'::jsonb end) as e);
    end
    $$`.execute(db);
  await sql`create index users_emails_ci on users using gin (scim_ci_values(data -> 'emails'))`.execute(db);
}
