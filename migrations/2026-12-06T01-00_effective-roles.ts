import { type Kysely, sql } from 'kysely';

// Users' effective roles and entitlements, kept current in the transaction of every write that changes
// them: a user's `roles`, `entitlements`, `active` or deprovisioning (users' triggers), its direct
// memberships of mapped groups (group_members' statement triggers, with the rows a statement added or
// removed), a mapped group's rename (groups' trigger), and a change of the catalogue or of the
// mappings (the admin API takes scim_access_refresh_targets and recomputes them in batches). Each recomputation writes user_roles and
// user_entitlements and, for a user whose set of values changed, `user.roles_changed` or
// `user.entitlements_changed` with the new set and what was added and removed.
//
// Recomputations of a user take turns: each first locks the user's row (FOR NO KEY UPDATE, which a
// write of the user takes anyway and a member's foreign key check does not wait for), then reads in
// statements of their own, which see what committed meanwhile. Two writes that each see only their
// own change (a member added while the user is deactivated) cannot both leave what they computed.
// Users are recomputed 1,000 at a time, each once.
//
// A change of the catalogue or the mappings lists the users to recompute; a write that adds users or
// changes memberships decides from the catalogue and the mappings whether to recompute. Each would
// miss the other's uncommitted work, so they take turns on a lock per organization: the change holds
// it (scim_access_refresh_targets), those writes share it (scim_roles_share), before reading anything.
export async function up(db: Kysely<unknown>): Promise<void> {
  const directory = await directorySchema(db);

  // Roles: the catalogued values of the user's `roles` (idp), the role of each mapping of a group it
  // is a direct member of (group:<id>), else the default; in `single` mode the one of highest priority
  // (then the first by value). None for a deactivated or deprovisioned user (fail closed).
  await sql`
    create function scim_user_roles_refresh(p_org uuid, p_users uuid[]) returns void
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

  // Entitlements: the catalogued values of the user's `entitlements` (idp); none for a deactivated
  // or deprovisioned user.
  await sql`
    create function scim_user_entitlements_refresh(p_org uuid, p_users uuid[]) returns void
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

  // Writes that add users or change memberships share their organizations' lock with one another;
  // a catalogue or mapping change holds it alone (roles.repository.ts takes the same keys).
  await sql`
    create function scim_roles_share(p_orgs uuid[]) returns void
    language sql as $$
      select pg_advisory_xact_lock_shared(hashtextextended('scimd.roles:' || o::text, 0))
      from (select distinct o from unnest(p_orgs) o order by o) x
    $$`.execute(db);

  // The users given (distinct), 1,000 at a time, each batch's rows locked in the order of their ids.
  // A deleted organization's users go with it: nothing is recomputed, no change written.
  await sql`
    create function scim_access_refresh(p_org uuid, p_users uuid[], p_roles boolean, p_entitlements boolean)
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

  // After a change of the catalogue or of the mappings, the users to recompute, once the change holds
  // the organization's lock: every user of the organization that may hold or gain a value (p_groups
  // null), or the members of the groups given by id or by displayName (the mappings' groups before
  // and after: a user holds a role from a group only while a member of it). The caller recomputes them
  // with scim_access_refresh, a statement per batch, so no statement outlasts the time limit.
  await sql`
    create function scim_access_refresh_targets(p_org uuid, p_groups uuid[], p_group_names text[])
    returns uuid[]
    language plpgsql as $$
    declare
      ids uuid[];
    begin
      perform pg_advisory_xact_lock(hashtextextended('scimd.roles:' || p_org::text, 0));
      if p_groups is null then
        select array_agg(u.id order by u.id) into ids from users u
        where u.org_id = p_org and ((u.active and u.deprovisioned_at is null)
          or exists (select 1 from user_roles h where h.org_id = p_org and h.user_id = u.id)
          or exists (select 1 from user_entitlements h where h.org_id = p_org and h.user_id = u.id));
      else
        select array_agg(distinct m.user_id order by m.user_id) into ids from group_members m
        where m.org_id = p_org and (m.group_id = any(p_groups) or m.group_id in (
          select g.id from groups g
          where g.org_id = p_org and lower(g.display_name) = any(array(select lower(n) from unnest(p_group_names) n))));
      end if;
      return coalesce(ids, '{}');
    end
    $$`.execute(db);

  // A new user: its values, or the default role. It is in no group yet (a member row needs the user).
  await sql`
    create function scim_users_added_access() returns trigger
    language plpgsql as $$
    declare
      r record;
    begin
      perform scim_roles_share(array(select distinct n.org_id from added_users n));
      -- An environment without a catalogue costs one probe of each.
      if not exists (select 1 from roles) and not exists (select 1 from entitlements) then
        return null;
      end if;
      for r in
        with orgs_added as (
          select o.org_id, exists (select 1 from role_settings s where s.org_id = o.org_id and s.default_role is not null)
            as fallback
          from (select distinct n.org_id from added_users n) o
        )
        select n.org_id,
          array_agg(n.id) filter (where o.fallback or jsonb_typeof(n.data -> 'roles') = 'array') as given_roles,
          array_agg(n.id) filter (where jsonb_typeof(n.data -> 'entitlements') = 'array') as given_entitlements
        from added_users n join orgs_added o on o.org_id = n.org_id
        group by n.org_id order by n.org_id
      loop
        perform scim_access_refresh(r.org_id, r.given_roles, true, false);
        perform scim_access_refresh(r.org_id, r.given_entitlements, false, true);
      end loop;
      return null;
    end
    $$`.execute(db);
  await sql`
    create trigger users_added_access after insert on users
    referencing new table as added_users
    for each statement execute function scim_users_added_access()`.execute(db);

  // A user whose values, activity or deprovisioning changed; other updates do not call the function.
  await sql`
    create function scim_user_access_changed() returns trigger
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
  await sql`
    create trigger users_access_changed after update on users
    for each row when (old.active <> new.active
      or (old.deprovisioned_at is null) <> (new.deprovisioned_at is null)
      or old.data -> 'roles' is distinct from new.data -> 'roles'
      or old.data -> 'entitlements' is distinct from new.data -> 'entitlements')
    execute function scim_user_access_changed()`.execute(db);

  // Members a statement added to a mapped group (by id, or by its displayName).
  await sql`
    create function scim_group_added_access() returns trigger
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
  await sql`
    create trigger group_members_added_access after insert on group_members
    referencing new table as added_members
    for each statement execute function scim_group_added_access()`.execute(db);

  // Members a statement removed (also with their group) that held a role from that group.
  await sql`
    create function scim_group_removed_access() returns trigger
    language plpgsql as $$
    declare
      r record;
    begin
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
    $$`.execute(db);
  await sql`
    create trigger group_members_removed_access after delete on group_members
    referencing old table as removed_members
    for each statement execute function scim_group_removed_access()`.execute(db);

  // A renamed group: a mapping by displayName stops or starts applying to its members.
  await sql`
    create function scim_group_renamed_access() returns trigger
    language plpgsql as $$
    begin
      perform scim_roles_share(array[new.org_id]);
      if exists (select 1 from role_mappings mp where mp.org_id = new.org_id
          and lower(mp.group_display_name) in (lower(old.display_name), lower(new.display_name))) then
        perform scim_access_refresh(new.org_id,
          array(select m.user_id from group_members m where m.org_id = new.org_id and m.group_id = new.id),
          true, false);
      end if;
      return null;
    end
    $$`.execute(db);
  await sql`
    create trigger groups_renamed_access after update of display_name on groups
    for each row when (lower(old.display_name) <> lower(new.display_name))
    execute function scim_group_renamed_access()`.execute(db);

  // The read model's part: each organization's catalogue (the environment's entries and its own) and
  // its users' effective values.
  for (const kind of ['roles', 'entitlements'] as const) {
    await sql`
      create view ${sql.id(directory, kind)} as
      select o.id as organization_id, c.id, c.value, c.display_name, c.description,
        ${kind === 'roles' ? sql`c.priority,` : sql``}
        case when c.org_id is null then 'environment' else 'organization' end as scope
      from orgs o join ${sql.table(kind)} c on c.org_id is null or c.org_id = o.id`.execute(db);
  }
  await sql`
    create view ${sql.id(directory, 'user_roles')} as
    select org_id as organization_id, user_id, role, sources from user_roles`.execute(db);
  await sql`
    create view ${sql.id(directory, 'user_entitlements')} as
    select org_id as organization_id, user_id, entitlement, sources from user_entitlements`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  const directory = await directorySchema(db);
  for (const view of ['user_entitlements', 'user_roles', 'entitlements', 'roles']) {
    await sql`drop view ${sql.id(directory, view)}`.execute(db);
  }
  await sql`drop trigger groups_renamed_access on groups`.execute(db);
  await sql`drop trigger group_members_removed_access on group_members`.execute(db);
  await sql`drop trigger group_members_added_access on group_members`.execute(db);
  await sql`drop trigger users_access_changed on users`.execute(db);
  await sql`drop trigger users_added_access on users`.execute(db);
  for (const fn of [
    'scim_group_renamed_access()',
    'scim_group_removed_access()',
    'scim_group_added_access()',
    'scim_user_access_changed()',
    'scim_users_added_access()',
    'scim_access_refresh_targets(uuid, uuid[], text[])',
    'scim_access_refresh(uuid, uuid[], boolean, boolean)',
    'scim_roles_share(uuid[])',
    'scim_user_entitlements_refresh(uuid, uuid[])',
    'scim_user_roles_refresh(uuid, uuid[])',
  ]) {
    await sql`drop function ${sql.raw(fn)}`.execute(db);
  }
}

/** `directory`, or `<schema>_directory` beside a test schema (as the change feed's migration names it). */
async function directorySchema(db: Kysely<unknown>): Promise<string> {
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  const schema = rows[0]!.schema;
  return schema === 'public' ? 'directory' : `${schema}_directory`;
}
