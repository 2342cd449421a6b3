import { type Kysely, sql } from 'kysely';

// A member added to a mapped group, in an organization whose mode is `multiple`: what it changes is
// known without recomputing the user (a plan of the whole recomputation for each add cost more than
// the add): the group's mapped roles gain the source `group:<id>`, and the default role, which holds
// only while nothing else gives one, goes. `single` mode, where priorities decide, recomputes.
export async function up(db: Kysely<unknown>): Promise<void> {
  // Members (p_users[i] added to p_groups[i]) of groups the caller found mapped.
  await sql`
    create function scim_user_roles_grant(p_org uuid, p_users uuid[], p_groups uuid[]) returns void
    language plpgsql as $$
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
      ), now_held as (
        select h.user_id, jsonb_agg(jsonb_build_object('value', h.role, 'sources', h.sources) order by h.role) as roles
        from user_roles h where h.org_id = p_org and h.user_id in (select user_id from changed)
        group by h.user_id
      )
      insert into changes (org_id, type, resource_type, resource_id, data)
      select p_org, 'user.roles_changed', 'User', c.user_id, jsonb_build_object(
        'roles', coalesce(n.roles, '[]'),
        'added', coalesce((select jsonb_agg(a.role order by a.role) from added a where a.user_id = c.user_id), '[]'),
        'removed', coalesce((select jsonb_agg(r.role order by r.role) from removed r where r.user_id = c.user_id), '[]'))
      from changed c left join now_held n on n.user_id = c.user_id order by c.user_id;
    end
    $$`.execute(db);

  await sql`
    create or replace function scim_group_added_access() returns trigger
    language plpgsql as $$
    declare
      r record;
    begin
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
    $$`.execute(db);
}

// Back to recomputing every member added to a mapped group (2026-12-06T01-00_effective-roles).
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace function scim_group_added_access() returns trigger
    language plpgsql as $$
    declare
      r record;
    begin
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
        select t.org_id, array_agg(t.user_id) as ids from added_members t
        join mapped m on m.org_id = t.org_id and m.group_id = t.group_id
        group by t.org_id order by t.org_id
      loop
        perform scim_access_refresh(r.org_id, r.ids, true, false);
      end loop;
      return null;
    end
    $$`.execute(db);
  await sql`drop function scim_user_roles_grant(uuid, uuid[], uuid[])`.execute(db);
}
