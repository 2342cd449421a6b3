import { type Kysely, sql } from 'kysely';

// A PATCH whose result does not depend on the stored user is written as one UPDATE that merges it
// into the row, without reading the row first.
export async function up(db: Kysely<unknown>): Promise<void> {
  // RFC 7396 JSON merge patch: objects merge key by key, null removes a key, anything else replaces;
  // an object left empty is removed, as validation prunes it from a resource.
  await sql`
    create function scim_merge_patch_deep(target jsonb, patch jsonb) returns jsonb
    language plpgsql immutable parallel safe
    as $$
    declare
      merged jsonb;
      key text;
      value jsonb;
    begin
      if jsonb_typeof(patch) is distinct from 'object' then
        return patch;
      end if;
      merged := case when jsonb_typeof(target) = 'object' then target else '{}'::jsonb end;
      for key, value in select e.key, e.value from jsonb_each(patch) as e loop
        if jsonb_typeof(value) = 'null' then
          merged := merged - key;
        else
          value := scim_merge_patch_deep(merged -> key, value);
          merged := case when value = '{}'::jsonb then merged - key
                         else merged || jsonb_build_object(key, value) end;
        end if;
      end loop;
      return merged;
    end
    $$`.execute(db);
  // The same, inlined into the statement for the common patch (a deactivation: keys set to plain
  // values), which needs no call into PL/pgSQL.
  await sql`
    create function scim_merge_patch(target jsonb, patch jsonb) returns jsonb
    language sql immutable parallel safe
    as $$
      select case
        when jsonb_typeof(target) = 'object' and jsonb_typeof(patch) = 'object'
          and not jsonb_path_exists(patch, 'strict $.* ? (@.type() == "object" || @.type() == "null")')
        then target || patch
        else scim_merge_patch_deep(target, patch) end
    $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop function scim_merge_patch(jsonb, jsonb)`.execute(db);
  await sql`drop function scim_merge_patch_deep(jsonb, jsonb)`.execute(db);
}
