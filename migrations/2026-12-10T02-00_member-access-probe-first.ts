import { type Kysely, sql } from 'kysely';

// A member write is one statement that inserts and deletes memberships, so each of its statement
// triggers runs even when its part changed nothing (an add deletes no member). The access triggers
// now begin with one probe of what the statement changed, as the change triggers do, instead of
// taking the organizations' roles turn and reading the mappings for no member.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace function scim_group_added_access() returns trigger
    language plpgsql as $function$
    declare
      r record;
    begin
      -- A statement that added no member (a removal) costs one probe.
      perform 1 from added_members limit 1;
      if not found then
        return null;
      end if;
      perform scim_roles_share(array(select distinct t.org_id from added_members t));
      -- Without any mapping (most environments), one probe.
      if not exists (select 1 from role_mappings) then
        return null;
      end if;
      for r in
        with touched as (
          select distinct t.org_id, t.group_id from added_members t
        ), mapped as (
          select x.org_id, x.group_id from touched x
          where exists (select 1 from role_mappings mp where mp.org_id = x.org_id and mp.group_id = x.group_id)
            or exists (select 1 from groups g join role_mappings mp
              on mp.org_id = g.org_id and lower(mp.group_display_name) = lower(g.display_name)
              where g.org_id = x.org_id and g.id = x.group_id)
        )
        select t.org_id, array_agg(t.user_id) as ids, array_agg(t.group_id) as groups,
          coalesce((select s.mode = 'single' from role_settings s where s.org_id = t.org_id), false) as single
        from added_members t
        join mapped m on m.org_id = t.org_id and m.group_id = t.group_id
        group by t.org_id order by t.org_id
      loop
        if r.single then
          perform scim_access_refresh(r.org_id, r.ids, true, false);
        else
          perform scim_user_roles_grant(r.org_id, r.ids, r.groups);
        end if;
      end loop;
      return null;
    end
    $function$
  `.execute(db);
  await sql`
    create or replace function scim_group_removed_access() returns trigger
    language plpgsql as $function$
    declare
      r record;
    begin
      -- A statement that removed no member (an add, a create) costs one probe.
      perform 1 from removed_members limit 1;
      if not found then
        return null;
      end if;
      perform scim_roles_share(array(select distinct t.org_id from removed_members t));
      if not exists (select 1 from user_roles) then
        return null;
      end if;
      for r in select t.org_id, array_agg(t.user_id) as ids from removed_members t
        where exists (select 1 from user_roles h where h.org_id = t.org_id and h.user_id = t.user_id
          and ('group:' || t.group_id) = any(h.sources))
        group by t.org_id order by t.org_id
      loop
        perform scim_access_refresh(r.org_id, r.ids, true, false);
      end loop;
      return null;
    end
    $function$
  `.execute(db);
}

// The functions give each member the roles 2026-12-07T00-00_access-by-change's give: going down
// leaves them in place.
export async function down(): Promise<void> {}
