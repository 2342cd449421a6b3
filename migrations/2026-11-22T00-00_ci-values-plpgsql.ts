import { type Kysely, sql } from 'kysely';

// scim_ci_values in PL/pgSQL, with the same body and results (the GIN index on it stays valid). A
// SQL-language function that cannot be inlined, as this one (an aggregate over a set), has its body
// parsed and planned again by every INSERT or UPDATE that computes the index; PL/pgSQL keeps the plan
// for the session.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace function scim_ci_values(items jsonb) returns text[]
    language plpgsql immutable parallel safe
    as $$
    begin
      return (
        select coalesce(array_agg(lower(e ->> 'value')), '{}')
        from jsonb_array_elements(case when jsonb_typeof(items) = 'array' then items else '[]'::jsonb end) as e);
    end
    $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace function scim_ci_values(items jsonb) returns text[]
    language sql immutable parallel safe
    as $$
      select coalesce(array_agg(lower(e ->> 'value')), '{}')
      from jsonb_array_elements(case when jsonb_typeof(items) = 'array' then items else '[]'::jsonb end) as e
    $$`.execute(db);
}
