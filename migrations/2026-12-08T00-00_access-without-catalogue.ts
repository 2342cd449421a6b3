import { type Kysely, sql } from 'kysely';

// What a write pays for roles and entitlements when an organization uses neither. A SQL function's
// statements are planned again at every call; in PL/pgSQL they keep their plans, so the functions a
// row trigger calls for each user are PL/pgSQL. A deprovisioned user without memberships deletes no
// member row, so the member triggers do not run for it. A recomputation skips a kind (roles or
// entitlements) that has no catalogue entry, no default role and no value held by the users: it
// would compute nothing for them.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace function scim_roles_share(p_orgs uuid[]) returns void
    language plpgsql as $$
    begin
      perform pg_advisory_xact_lock_shared(hashtextextended('scimd.roles:' || x.o::text, 0))
      from (select distinct o from unnest(p_orgs) o order by o) x;
    end
    $$`.execute(db);

  await sql`
    create or replace function scim_access_revoke(p_org uuid, p_user uuid) returns void
    language plpgsql as $$
    begin
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
    end
    $$`.execute(db);

  await sql`
    create or replace function scim_user_left_groups() returns trigger
    language plpgsql as $$
    begin
      if exists (select 1 from group_members where org_id = new.org_id and user_id = new.id) then
        delete from group_members where org_id = new.org_id and user_id = new.id;
      end if;
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
      p_roles := p_roles and (exists (select 1 from roles r where r.org_id is null or r.org_id = p_org)
        or exists (select 1 from role_settings s where s.org_id = p_org and s.default_role is not null)
        or exists (select 1 from user_roles h where h.org_id = p_org and h.user_id = any(p_users)));
      p_entitlements := p_entitlements
        and (exists (select 1 from entitlements e where e.org_id is null or e.org_id = p_org)
          or exists (select 1 from user_entitlements h where h.org_id = p_org and h.user_id = any(p_users)));
      if not (p_roles or p_entitlements) then
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
}

// The functions give the same rows and changes as those of 2026-12-07T00-00_access-by-change and
// 2026-12-06T01-00_effective-roles: going down leaves them in place.
export async function down(): Promise<void> {}
