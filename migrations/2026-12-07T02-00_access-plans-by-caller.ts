import { type Kysely, sql } from 'kysely';

// Whether the recomputation is planned at every call depends on how many users it recomputes. One
// user (a deactivation, a reactivation, a change of its `roles`) keeps the plan PL/pgSQL settles on:
// planning it at every call cost a deactivation more than the rest of its write. Several (a mapping
// or catalogue change, a group's members removed) plan each batch for user_roles as it then is: a
// plan a connection kept from when the table was nearly empty took minutes over 100,000 users.
// And a user deactivated or deprovisioned is not recomputed at all: it holds nothing.
const FUNCTIONS = ['scim_user_roles_refresh(uuid, uuid[])', 'scim_user_entitlements_refresh(uuid, uuid[])'];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const fn of FUNCTIONS) await sql`alter function ${sql.raw(fn)} reset plan_cache_mode`.execute(db);
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

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace function scim_user_access_changed() returns trigger
    language plpgsql as $$
    begin
      perform scim_access_refresh(new.org_id, array[new.id],
        old.data -> 'roles' is distinct from new.data -> 'roles' or old.active <> new.active
          or (old.deprovisioned_at is null) <> (new.deprovisioned_at is null),
        old.data -> 'entitlements' is distinct from new.data -> 'entitlements' or old.active <> new.active
          or (old.deprovisioned_at is null) <> (new.deprovisioned_at is null));
      return null;
    end
    $$`.execute(db);
  await sql`drop function scim_access_revoke(uuid, uuid)`.execute(db);
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
  for (const fn of FUNCTIONS) {
    await sql`alter function ${sql.raw(fn)} set plan_cache_mode = force_custom_plan`.execute(db);
  }
}
