import { type Kysely, sql } from 'kysely';

// A deactivated or deprovisioned user's roles and entitlements go only when it holds some: most
// users hold none (an organization without a catalogue, a default role or values from its IdP), and
// a probe of each table costs less than deleting nothing and aggregating what went.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace function scim_access_revoke(p_org uuid, p_user uuid) returns void
    language plpgsql as $function$
    begin
      if exists (select 1 from user_roles h where h.org_id = p_org and h.user_id = p_user) then
        with gone as (
          delete from user_roles h where h.org_id = p_org and h.user_id = p_user returning h.role
        )
        insert into changes (org_id, type, resource_type, resource_id, data)
        select p_org, 'user.roles_changed', 'User', p_user,
          jsonb_build_object('roles', '[]'::jsonb, 'added', '[]'::jsonb, 'removed', jsonb_agg(g.role order by g.role))
        from gone g having count(*) > 0;
      end if;
      if exists (select 1 from user_entitlements h where h.org_id = p_org and h.user_id = p_user) then
        with gone as (
          delete from user_entitlements h where h.org_id = p_org and h.user_id = p_user returning h.entitlement
        )
        insert into changes (org_id, type, resource_type, resource_id, data)
        select p_org, 'user.entitlements_changed', 'User', p_user,
          jsonb_build_object('entitlements', '[]'::jsonb, 'added', '[]'::jsonb,
            'removed', jsonb_agg(g.entitlement order by g.entitlement))
        from gone g having count(*) > 0;
      end if;
    end
    $function$
  `.execute(db);
}

// The function takes from each user what 2026-12-08T00-00_access-without-catalogue's takes: going
// down leaves it in place.
export async function down(): Promise<void> {}
