import { type Kysely, sql } from 'kysely';

// The recomputation of users' roles and entitlements, planned anew at every call: a plan kept by a
// connection (PL/pgSQL keeps one after a few calls) was made for the table sizes of then, and a
// mapping that grows or empties user_roles by 100,000 rows ran for minutes on one made while it
// was empty. Each user's new set is aggregated once, not looked up per changed user.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace function scim_user_roles_refresh(p_org uuid, p_users uuid[]) returns void
    language plpgsql set plan_cache_mode = force_custom_plan as $$
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
    language plpgsql set plan_cache_mode = force_custom_plan as $$
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
}

// Back to the functions of 2026-12-06T01-00_effective-roles.
export async function down(db: Kysely<unknown>): Promise<void> {
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
      )
      insert into changes (org_id, type, resource_type, resource_id, data)
      select p_org, 'user.roles_changed', 'User', c.user_id, jsonb_build_object(
        'roles', coalesce((select jsonb_agg(jsonb_build_object('value', d.role, 'sources', d.sources) order by d.role)
          from desired d where d.user_id = c.user_id), '[]'),
        'added', c.added, 'removed', c.removed)
      from changed c order by c.user_id;
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
      )
      insert into changes (org_id, type, resource_type, resource_id, data)
      select p_org, 'user.entitlements_changed', 'User', c.user_id, jsonb_build_object(
        'entitlements', coalesce((select jsonb_agg(jsonb_build_object('value', d.entitlement, 'sources', d.sources)
          order by d.entitlement) from desired d where d.user_id = c.user_id), '[]'),
        'added', c.added, 'removed', c.removed)
      from changed c order by c.user_id;
    end
    $$`.execute(db);
}
