import { type Kysely, sql } from 'kysely';

// A member added to a mapped group is granted the group's roles by statements planned once per
// connection: with array arguments Postgres preferred a custom plan, so each add planned the three
// statements again, which cost more than running them. A plan kept for the connection's life must
// not depend on the table's size when it was made (a scan of user_roles planned while it was empty
// stayed after a mapping filled it), so the statements reach users' rows by key only.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace function scim_user_roles_grant(p_org uuid, p_users uuid[], p_groups uuid[]) returns void
    language plpgsql
    set plan_cache_mode = force_generic_plan
    set enable_seqscan = off
    as $$
    declare
      granted_users uuid[];
      added_users uuid[];
      added_roles text[];
      removed_users uuid[];
      removed_roles text[];
    begin
      perform 1 from users u where u.org_id = p_org and u.id = any(p_users) order by u.id for no key update;
      with added as (
        select distinct a.user_id, a.group_id from unnest(p_users, p_groups) a(user_id, group_id)
        join users u on u.org_id = p_org and u.id = a.user_id and u.active and u.deprovisioned_at is null
      ), mapped as (
        select mp.group_id, mp.role from role_mappings mp
        where mp.org_id = p_org and mp.group_id = any(p_groups)
        union all
        select g.id, mp.role from groups g
        join role_mappings mp on mp.org_id = p_org and lower(mp.group_display_name) = lower(g.display_name)
        where g.org_id = p_org and g.id = any(p_groups)
      ), granted as (
        select a.user_id, c.value as role,
          array_agg(distinct 'group:' || a.group_id order by 'group:' || a.group_id) as sources
        from added a join mapped mp on mp.group_id = a.group_id
        join roles c on (c.org_id is null or c.org_id = p_org) and lower(c.value) = lower(mp.role)
        group by a.user_id, c.value
      ), put as (
        insert into user_roles as h (org_id, user_id, role, sources)
        select p_org, g.user_id, g.role, g.sources from granted g
        on conflict (org_id, user_id, role) do update
          set sources = array(select distinct s from unnest(h.sources || excluded.sources) s
            where s <> 'default' order by s)
        returning h.user_id, h.role, h.xmax = 0 as inserted
      )
      select array_agg(distinct p.user_id), array_agg(p.user_id) filter (where p.inserted),
        array_agg(p.role) filter (where p.inserted)
      into granted_users, added_users, added_roles from put p;
      if granted_users is null then
        return;
      end if;
      -- The default role is held only while nothing else gives one.
      with gone as (
        delete from user_roles h
        where h.org_id = p_org and h.user_id = any(granted_users) and h.sources = array['default']
        returning h.user_id, h.role
      )
      select array_agg(g.user_id), array_agg(g.role) into removed_users, removed_roles from gone g;
      with added as (
        select * from unnest(added_users, added_roles) a(user_id, role)
      ), removed as (
        select * from unnest(removed_users, removed_roles) r(user_id, role)
      ), changed as (
        select user_id from added union select user_id from removed
      )
      insert into changes (org_id, type, resource_type, resource_id, data)
      select p_org, 'user.roles_changed', 'User', c.user_id, jsonb_build_object(
        'roles', coalesce((select jsonb_agg(jsonb_build_object('value', h.role, 'sources', h.sources) order by h.role)
          from user_roles h where h.org_id = p_org and h.user_id = c.user_id), '[]'),
        'added', coalesce((select jsonb_agg(a.role order by a.role) from added a where a.user_id = c.user_id), '[]'),
        'removed', coalesce((select jsonb_agg(r.role order by r.role) from removed r where r.user_id = c.user_id), '[]'))
      from changed c order by c.user_id;
    end
    $$`.execute(db);
}

// The function gives the same rows and changes as 2026-12-07T00-00_access-by-change's: going down
// leaves it in place.
export async function down(): Promise<void> {}
