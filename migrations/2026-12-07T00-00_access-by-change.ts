import { type Kysely, sql } from 'kysely';

// Users' roles and entitlements recomputed only where a write's result is not already known, and
// planned for the table as it is when many are. A member added to a mapped group in `multiple` mode
// gains the group's roles (source `group:<id>`) and loses the default role, which holds only while
// nothing else gives one; a deactivated or deprovisioned user loses everything (fail closed). A
// recomputation of several users (a mapping or catalogue change, a group's members removed) plans
// each batch anew: a plan a connection kept from when user_roles was nearly empty took minutes over
// 100,000 users. One user's recomputation keeps PL/pgSQL's plan: planning it at every call cost a
// write more than the rest of it. Each recomputed user's new set is aggregated once per batch.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace function scim_user_roles_refresh(p_org uuid, p_users uuid[]) returns void
    language plpgsql as $$
    declare
      fallback text;
      single boolean := false;
    begin
      select s.default_role, s.mode = 'single' into fallback, single from role_settings s where s.org_id = p_org;
      single := coalesce(single, false);
      with live as materialized (
        select u.id, u.data -> 'roles' as given from users u
        where u.org_id = p_org and u.id = any(p_users) and u.active and u.deprovisioned_at is null
      ), catalogue as materialized (
        select r.value, r.priority from roles r where r.org_id is null or r.org_id = p_org
      ), mapped as materialized (
        select mp.group_id, mp.role from role_mappings mp where mp.org_id = p_org and mp.group_id is not null
        union all
        select g.id, mp.role from role_mappings mp
        join groups g on g.org_id = p_org and lower(g.display_name) = lower(mp.group_display_name)
        where mp.org_id = p_org and mp.group_display_name is not null
      ), given as (
        select l.id as user_id, e ->> 'value' as role, 'idp' as source
        from live l cross join lateral jsonb_array_elements(
          case when jsonb_typeof(l.given) = 'array' then l.given else '[]' end) e
        union all
        select m.user_id, mp.role, 'group:' || m.group_id
        from group_members m join live l on l.id = m.user_id join mapped mp on mp.group_id = m.group_id
        where m.org_id = p_org and m.user_id = any(p_users)
      ), catalogued as (
        select g.user_id, c.value as role, c.priority, g.source
        from given g join catalogue c on lower(c.value) = lower(g.role)
      ), chosen as (
        select * from catalogued
        union all
        select l.id, c.value, c.priority, 'default' from live l join catalogue c on lower(c.value) = lower(fallback)
        where not exists (select 1 from catalogued g where g.user_id = l.id)
      ), merged as (
        select c.user_id, c.role, c.priority, array_agg(distinct c.source order by c.source) as sources,
          row_number() over (partition by c.user_id order by c.priority desc, c.role) as rank
        from chosen c group by c.user_id, c.role, c.priority
      ), desired as materialized (
        select m.user_id, m.role, m.sources from merged m where not single or m.rank = 1
      ), held as materialized (
        select h.user_id, h.role, h.sources from user_roles h
        join users u on u.org_id = p_org and u.id = h.user_id
        where h.org_id = p_org and h.user_id = any(p_users)
      ), gone as (
        delete from user_roles h using held x
        where h.org_id = p_org and h.user_id = x.user_id and h.role = x.role
          and not exists (select 1 from desired d where d.user_id = x.user_id and d.role = x.role)
      ), put as (
        insert into user_roles (org_id, user_id, role, sources)
        select p_org, d.user_id, d.role, d.sources from desired d
        left join held x on x.user_id = d.user_id and x.role = d.role
        where x.sources is distinct from d.sources
        on conflict (org_id, user_id, role) do update set sources = excluded.sources
      ), changed as (
        select coalesce(d.user_id, x.user_id) as user_id,
          coalesce(jsonb_agg(d.role order by d.role) filter (where x.role is null), '[]') as added,
          coalesce(jsonb_agg(x.role order by x.role) filter (where d.role is null), '[]') as removed
        from desired d full join held x on x.user_id = d.user_id and x.role = d.role
        group by 1
        having bool_or(d.role is null or x.role is null)
      ), now_held as (
        select d.user_id, jsonb_agg(jsonb_build_object('value', d.role, 'sources', d.sources) order by d.role) as roles
        from desired d group by d.user_id
      )
      insert into changes (org_id, type, resource_type, resource_id, data)
      select p_org, 'user.roles_changed', 'User', c.user_id, jsonb_build_object(
        'roles', coalesce(n.roles, '[]'), 'added', c.added, 'removed', c.removed)
      from changed c left join now_held n on n.user_id = c.user_id order by c.user_id;
    end
    $$`.execute(db);

  await sql`
    create or replace function scim_user_entitlements_refresh(p_org uuid, p_users uuid[]) returns void
    language plpgsql as $$
    begin
      with desired as materialized (
        select u.id as user_id, c.value as entitlement, array['idp'] as sources
        from users u
        cross join lateral jsonb_array_elements(
          case when jsonb_typeof(u.data -> 'entitlements') = 'array' then u.data -> 'entitlements' else '[]' end) e
        join entitlements c on (c.org_id is null or c.org_id = p_org) and lower(c.value) = lower(e ->> 'value')
        where u.org_id = p_org and u.id = any(p_users) and u.active and u.deprovisioned_at is null
        group by u.id, c.value
      ), held as materialized (
        select h.user_id, h.entitlement, h.sources from user_entitlements h
        join users u on u.org_id = p_org and u.id = h.user_id
        where h.org_id = p_org and h.user_id = any(p_users)
      ), gone as (
        delete from user_entitlements h using held x
        where h.org_id = p_org and h.user_id = x.user_id and h.entitlement = x.entitlement
          and not exists (select 1 from desired d where d.user_id = x.user_id and d.entitlement = x.entitlement)
      ), put as (
        insert into user_entitlements (org_id, user_id, entitlement, sources)
        select p_org, d.user_id, d.entitlement, d.sources from desired d
        left join held x on x.user_id = d.user_id and x.entitlement = d.entitlement
        where x.sources is distinct from d.sources
        on conflict (org_id, user_id, entitlement) do update set sources = excluded.sources
      ), changed as (
        select coalesce(d.user_id, x.user_id) as user_id,
          coalesce(jsonb_agg(d.entitlement order by d.entitlement) filter (where x.entitlement is null), '[]') as added,
          coalesce(jsonb_agg(x.entitlement order by x.entitlement) filter (where d.entitlement is null), '[]') as removed
        from desired d full join held x on x.user_id = d.user_id and x.entitlement = d.entitlement
        group by 1
        having bool_or(d.entitlement is null or x.entitlement is null)
      ), now_held as (
        select d.user_id,
          jsonb_agg(jsonb_build_object('value', d.entitlement, 'sources', d.sources) order by d.entitlement) as entitlements
        from desired d group by d.user_id
      )
      insert into changes (org_id, type, resource_type, resource_id, data)
      select p_org, 'user.entitlements_changed', 'User', c.user_id, jsonb_build_object(
        'entitlements', coalesce(n.entitlements, '[]'), 'added', c.added, 'removed', c.removed)
      from changed c left join now_held n on n.user_id = c.user_id order by c.user_id;
    end
    $$`.execute(db);

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

  await sql`
    create or replace function scim_access_refresh(p_org uuid, p_users uuid[], p_roles boolean, p_entitlements boolean)
    returns void
    language plpgsql as $$
    declare
      ids uuid[];
      batch uuid[];
      i integer := 1;
    begin
      if not exists (select 1 from orgs where id = p_org) then
        return;
      end if;
      select coalesce(array_agg(distinct x order by x), '{}') into ids from unnest(p_users) x;
      -- Several users: each batch planned for user_roles as it then is (until the transaction ends).
      if cardinality(ids) > 1 then
        perform set_config('plan_cache_mode', 'force_custom_plan', true);
      end if;
      while i <= cardinality(ids) loop
        batch := ids[i : i + 999];
        perform 1 from users u where u.org_id = p_org and u.id = any(batch) order by u.id for no key update;
        if p_roles then
          perform scim_user_roles_refresh(p_org, batch);
        end if;
        if p_entitlements then
          perform scim_user_entitlements_refresh(p_org, batch);
        end if;
        i := i + 1000;
      end loop;
    end
    $$`.execute(db);
  // A deactivated or deprovisioned user holds nothing (fail closed): its rows go, without a
  // recomputation, and the feed hears what it lost.
  await sql`
    create function scim_access_revoke(p_org uuid, p_user uuid) returns void
    language sql as $$
      with gone as (
        delete from user_roles h where h.org_id = p_org and h.user_id = p_user returning h.role
      )
      insert into changes (org_id, type, resource_type, resource_id, data)
      select p_org, 'user.roles_changed', 'User', p_user,
        jsonb_build_object('roles', '[]'::jsonb, 'added', '[]'::jsonb, 'removed', jsonb_agg(g.role order by g.role))
      from gone g having count(*) > 0;
      with gone as (
        delete from user_entitlements h where h.org_id = p_org and h.user_id = p_user returning h.entitlement
      )
      insert into changes (org_id, type, resource_type, resource_id, data)
      select p_org, 'user.entitlements_changed', 'User', p_user,
        jsonb_build_object('entitlements', '[]'::jsonb, 'added', '[]'::jsonb,
          'removed', jsonb_agg(g.entitlement order by g.entitlement))
      from gone g having count(*) > 0;
    $$`.execute(db);
  await sql`
    create or replace function scim_user_access_changed() returns trigger
    language plpgsql as $$
    begin
      if not new.active or new.deprovisioned_at is not null then
        perform scim_access_revoke(new.org_id, new.id);
        return null;
      end if;
      perform scim_access_refresh(new.org_id, array[new.id],
        old.data -> 'roles' is distinct from new.data -> 'roles' or old.active <> new.active
          or (old.deprovisioned_at is null) <> (new.deprovisioned_at is null),
        old.data -> 'entitlements' is distinct from new.data -> 'entitlements' or old.active <> new.active
          or (old.deprovisioned_at is null) <> (new.deprovisioned_at is null));
      return null;
    end
    $$`.execute(db);
}

// The functions give each user the roles and entitlements the recomputation of
// 2026-12-06T01-00_effective-roles gives: going down leaves them in place.
export async function down(): Promise<void> {}
