import { type Kysely, sql } from 'kysely';

// The product's side: a read model (views in a schema of their own) and the change feed, written by
// triggers in the transaction of every change to users, groups, memberships and organizations.
//
// A change gets `seq` when it is written, in the order transactions write, not the order they
// commit. It gets `position` later (scim_number_changes), from one counter under a row lock, and only
// once it has committed: positions are handed out in commit order, so a reader that has read up to a
// position never finds a change below it later.
export async function up(db: Kysely<unknown>): Promise<void> {
  const directory = await directorySchema(db);

  await sql`
    create table changes (
      seq bigint generated always as identity,
      position bigint,
      org_id uuid not null,
      type text not null,
      resource_type text not null,
      resource_id uuid not null,
      occurred_at timestamptz not null default now(),
      attributes text[],
      mode text,
      data jsonb not null
    )`.execute(db);
  await sql`create index changes_unpositioned on changes (seq) where position is null`.execute(db);
  await sql`create unique index changes_position on changes (position) where position is not null`.execute(
    db,
  );
  await sql`create index changes_org_position on changes (org_id, position) where position is not null`.execute(
    db,
  );
  // Numbering updates every row once and the purge deletes old rows in bulk: vacuum the table often.
  await sql`alter table changes set (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.05)`.execute(
    db,
  );

  // The feed's one counter: the last position handed out, and the last one removed by retention.
  await sql`
    create table change_feed (
      singleton boolean primary key default true check (singleton),
      last_position bigint not null default 0,
      purged_through bigint not null default 0
    )`.execute(db);
  await sql`insert into change_feed default values`.execute(db);

  // Positions for up to `max_rows` committed changes without one, in the order they were written;
  // tells listening processes the last position when there were any. Also returns the last position
  // removed by retention.
  // Numbered rows stay in changes_unpositioned as dead entries until vacuum. A plain index scan marks
  // them dead as it passes, so the next numbering skips them; a bitmap scan (which the planner picks
  // for a small estimate) would visit every one of their heap pages, every time.
  await sql`
    create function scim_number_changes(
      max_rows integer, out last_position bigint, out numbered integer, out purged_through bigint)
    language plpgsql
    set enable_bitmapscan = off
    as $$
    declare
      start bigint;
    begin
      select f.last_position, f.purged_through into start, purged_through from change_feed f for update;
      with todo as (
        select c.seq, start + row_number() over (order by c.seq) as position
        from changes c where c.position is null order by c.seq limit max_rows
      ), done as (
        update changes c set position = todo.position from todo
        where c.seq = todo.seq and c.position is null
        returning c.position
      )
      select count(*)::integer, coalesce(max(done.position), start) into numbered, last_position from done;
      if numbered > 0 then
        update change_feed set last_position = scim_number_changes.last_position;
        perform pg_notify('scimd_changes', current_schema() || ':' || scim_number_changes.last_position);
      end if;
    end
    $$`.execute(db);

  // The read model, version 1: one function per resource, used by the views and by the changes, so
  // a change's data is exactly the view's row.
  await sql`
    create function scim_read_user(u users) returns table (
      org_id uuid, id uuid, external_id text, user_name text, active boolean,
      deprovisioned boolean, deprovisioned_at timestamptz,
      display_name text, given_name text, family_name text,
      primary_email text, emails text[],
      title text, department text, manager_id text, employee_number text,
      attributes jsonb, created_at timestamptz, updated_at timestamptz)
    language sql stable parallel safe
    as $$
      select u.org_id, u.id, u.external_id, u.user_name, u.active,
        u.deprovisioned_at is not null, u.deprovisioned_at,
        u.display_name, u.data -> 'name' ->> 'givenName', u.data -> 'name' ->> 'familyName',
        coalesce(jsonb_path_query_first(u.data, '$.emails[*] ? (@.primary == true).value') #>> '{}',
                 u.data -> 'emails' -> 0 ->> 'value'),
        array(select e ->> 'value' from jsonb_array_elements(
          case when jsonb_typeof(u.data -> 'emails') = 'array' then u.data -> 'emails' else '[]' end) as e
          where e ->> 'value' is not null),
        u.data ->> 'title',
        u.data -> 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User' ->> 'department',
        u.data -> 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User' -> 'manager' ->> 'value',
        u.data -> 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User' ->> 'employeeNumber',
        u.data, u.created_at, u.updated_at
    $$`.execute(db);
  await sql`
    create function scim_read_group(g groups) returns table (
      org_id uuid, id uuid, external_id text, display_name text,
      attributes jsonb, created_at timestamptz, updated_at timestamptz)
    language sql stable parallel safe
    as $$
      select g.org_id, g.id, g.external_id, g.display_name, g.data - 'members', g.created_at, g.updated_at
    $$`.execute(db);

  await sql`create schema ${sql.id(directory)}`.execute(db);
  await sql`
    create view ${sql.id(directory, 'users')} as
    select r.* from users u cross join lateral scim_read_user(u) r`.execute(db);
  await sql`
    create view ${sql.id(directory, 'groups')} as
    select r.* from groups g cross join lateral scim_read_group(g) r`.execute(db);
  await sql`
    create view ${sql.id(directory, 'group_members')} as
    select org_id, group_id, user_id, created_at as added_at from group_members`.execute(db);

  await sql`
    create function scim_user_changes() returns trigger
    language plpgsql as $$
    declare
      kind text;
      how text;
    begin
      if tg_op = 'INSERT' then
        insert into changes (org_id, type, resource_type, resource_id, data)
        select new.org_id, 'user.created', 'User', new.id, to_jsonb(r) from scim_read_user(new) r;
        return null;
      end if;
      if tg_op = 'DELETE' then
        -- A deleted organization's users go with it: its one change is org.deleted.
        if old.deprovisioned_at is not null or not exists (select 1 from orgs where id = old.org_id) then
          return null;
        end if;
        -- The row is gone: its last state, deprovisioned, as the other modes leave it.
        insert into changes (org_id, type, resource_type, resource_id, mode, data)
        select old.org_id, 'user.deprovisioned', 'User', old.id, 'delete',
          to_jsonb(r) || jsonb_build_object('active', false, 'deprovisioned', true, 'deprovisioned_at', now())
        from scim_read_user(old) r;
        return null;
      end if;
      if old.deprovisioned_at is null and new.deprovisioned_at is not null then
        kind := 'user.deprovisioned';
        select o.deprovisioning into how from orgs o where o.id = new.org_id;
      elsif new.data is not distinct from old.data and new.user_name = old.user_name
            and new.external_id is not distinct from old.external_id then
        return null;
      elsif new.active <> old.active then
        kind := case when new.active then 'user.reactivated' else 'user.deactivated' end;
      else
        kind := 'user.updated';
      end if;
      insert into changes (org_id, type, resource_type, resource_id, attributes, mode, data)
      select new.org_id, kind, 'User', new.id, ${changedAttributes('old.data', 'new.data')}, how, to_jsonb(r)
      from scim_read_user(new) r;
      return null;
    end
    $$`.execute(db);
  await sql`
    create trigger users_changes after insert or update or delete on users
    for each row execute function scim_user_changes()`.execute(db);

  await sql`
    create function scim_group_changes() returns trigger
    language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        insert into changes (org_id, type, resource_type, resource_id, data)
        select new.org_id, 'group.created', 'Group', new.id, to_jsonb(r) from scim_read_group(new) r;
      elsif tg_op = 'DELETE' then
        if exists (select 1 from orgs where id = old.org_id) then
          insert into changes (org_id, type, resource_type, resource_id, data)
          select old.org_id, 'group.deleted', 'Group', old.id, to_jsonb(r) from scim_read_group(old) r;
        end if;
      elsif new.data is distinct from old.data or new.display_name <> old.display_name
            or new.external_id is distinct from old.external_id then
        insert into changes (org_id, type, resource_type, resource_id, attributes, data)
        select new.org_id, 'group.updated', 'Group', new.id, ${changedAttributes('old.data', 'new.data')},
          to_jsonb(r) from scim_read_group(new) r;
      end if;
      return null;
    end
    $$`.execute(db);
  await sql`
    create trigger groups_changes after insert or update or delete on groups
    for each row execute function scim_group_changes()`.execute(db);

  // Members added or removed by one statement, per group, at most 1,000 user ids a change. Members
  // leaving with their group (or their organization) are told by the group's (the org's) change.
  for (const [op, table, type] of [
    ['insert', 'added_members', 'group.members_added'],
    ['delete', 'removed_members', 'group.members_removed'],
  ] as const) {
    await sql`
      create function ${sql.id(`scim_group_${table}`)}() returns trigger
      language plpgsql as $$
      begin
        -- A statement that changed no row (most group writes) costs one probe.
        perform 1 from ${sql.raw(table)} limit 1;
        if not found then
          return null;
        end if;
        insert into changes (org_id, type, resource_type, resource_id, data)
        select m.org_id, ${sql.lit(type)}, 'Group', m.group_id, jsonb_build_object('userIds', jsonb_agg(m.user_id order by m.user_id))
        from (
          select t.org_id, t.group_id, t.user_id,
            (row_number() over (partition by t.org_id, t.group_id order by t.user_id) - 1) / 1000 as chunk
          from ${sql.raw(table)} t
          join groups g on g.org_id = t.org_id and g.id = t.group_id
        ) m
        group by m.org_id, m.group_id, m.chunk
        order by m.org_id, m.group_id, m.chunk;
        return null;
      end
      $$`.execute(db);
    await sql`
      create trigger ${sql.id(`group_members_${op}_changes`)} after ${sql.raw(op)} on group_members
      referencing ${sql.raw(op === 'insert' ? 'new' : 'old')} table as ${sql.raw(table)}
      for each statement execute function ${sql.id(`scim_group_${table}`)}()`.execute(db);
  }

  // A deleted organization's changes go with its data; org.deleted stays as its last change.
  await sql`
    create function scim_org_deleted() returns trigger
    language plpgsql as $$
    begin
      -- Numbered and not yet numbered, each through its index.
      delete from changes where org_id = old.id and position is not null;
      delete from changes where org_id = old.id and position is null;
      insert into changes (org_id, type, resource_type, resource_id, data)
      values (old.id, 'org.deleted', 'Org', old.id, jsonb_build_object('id', old.id, 'name', old.name));
      return null;
    end
    $$`.execute(db);
  await sql`
    create trigger orgs_changes after delete on orgs
    for each row execute function scim_org_deleted()`.execute(db);

  // Read-only credentials for the product: they read the feed and nothing else.
  await sql`
    create table api_keys (
      id uuid primary key,
      name text not null,
      prefix text not null,
      secret_hash bytea not null,
      created_at timestamptz not null,
      revoked_at timestamptz,
      last_used_at timestamptz
    )`.execute(db);
  await sql`create index api_keys_prefix on api_keys (prefix)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  const directory = await directorySchema(db);
  await sql`drop schema ${sql.id(directory)} cascade`.execute(db);
  await sql`drop trigger orgs_changes on orgs`.execute(db);
  await sql`drop trigger group_members_insert_changes on group_members`.execute(db);
  await sql`drop trigger group_members_delete_changes on group_members`.execute(db);
  await sql`drop trigger groups_changes on groups`.execute(db);
  await sql`drop trigger users_changes on users`.execute(db);
  for (const fn of [
    'scim_org_deleted()',
    'scim_group_added_members()',
    'scim_group_removed_members()',
    'scim_group_changes()',
    'scim_user_changes()',
    'scim_read_group(groups)',
    'scim_read_user(users)',
    'scim_number_changes(integer)',
  ]) {
    await sql`drop function ${sql.raw(fn)}`.execute(db);
  }
  await sql`drop table api_keys, change_feed, changes`.execute(db);
}

/**
 * The names of the attributes that differ between two versions of a resource, sorted; an extension's
 * attributes are named with their schema URN (`urn:…:enterprise:2.0:User:department`). A subquery
 * written into each trigger's statement, so that it is planned once per session with the statement:
 * a function called from a trigger runs as queries of its own on every call.
 */
export function changedAttributes(before: string, after: string) {
  const key = 'coalesce(n.key, o.key)';
  const isExtension = `${key} like 'urn:%' and jsonb_typeof(coalesce(o.value, '{}')) = 'object' and jsonb_typeof(coalesce(n.value, '{}')) = 'object'`;
  return sql.raw(`(
        select coalesce(array_agg(d.name order by d.name collate "C"), '{}')
        from jsonb_each(${after}) n full join jsonb_each(${before}) o on o.key = n.key
        cross join lateral (
          select ${key} as name where not (${isExtension})
          union all
          select ${key} || ':' || coalesce(sn.key, so.key)
          from jsonb_each(case when jsonb_typeof(n.value) = 'object' then n.value else '{}' end) sn
          full join jsonb_each(case when jsonb_typeof(o.value) = 'object' then o.value else '{}' end) so
            on so.key = sn.key
          where ${isExtension} and sn.value is distinct from so.value
        ) d
        where n.value is distinct from o.value and ${key} <> 'schemas')`);
}

/**
 * `directory`, or `<schema>_directory` when the tables live in a schema other than public (each test
 * file migrates a schema of its own on one database).
 */
export async function directorySchema(db: Kysely<unknown>): Promise<string> {
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  const schema = rows[0]!.schema;
  return schema === 'public' ? 'directory' : `${schema}_directory`;
}
