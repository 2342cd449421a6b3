import { type Kysely, sql } from 'kysely';

// A change's read-model data and changed attributes are derived when it is numbered, instead of in
// the trigger of every write. The trigger keeps the row as written (`written`, the row as JSON) and,
// for an update, the attributes before it (`previous`); numbering, which rewrites every change's row
// anyway to give it its position, derives both for its whole batch in one statement and clears the
// two columns. A row trigger runs each query of its own once per row; the batch runs them once, at
// about a quarter of the cost a change, and the SCIM write no longer waits for it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table changes alter column data drop not null, add column written jsonb, add column previous jsonb`.execute(
    db,
  );

  await sql`
    create or replace function scim_user_changes() returns trigger
    language plpgsql as $$
    declare
      kind text;
      how text;
    begin
      if tg_op = 'INSERT' then
        insert into changes (org_id, type, resource_type, resource_id, written)
        values (new.org_id, 'user.created', 'User', new.id, to_jsonb(new));
        return null;
      end if;
      if tg_op = 'DELETE' then
        -- A deleted organization's users go with it: its one change is org.deleted.
        if old.deprovisioned_at is not null or not exists (select 1 from orgs where id = old.org_id) then
          return null;
        end if;
        -- The row is gone: its last state, deprovisioned (numbering derives it), as the other modes leave it.
        insert into changes (org_id, type, resource_type, resource_id, mode, written)
        values (old.org_id, 'user.deprovisioned', 'User', old.id, 'delete', to_jsonb(old));
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
      insert into changes (org_id, type, resource_type, resource_id, mode, written, previous)
      values (new.org_id, kind, 'User', new.id, how, to_jsonb(new), old.data);
      return null;
    end
    $$`.execute(db);

  await sql`
    create or replace function scim_group_changes() returns trigger
    language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        insert into changes (org_id, type, resource_type, resource_id, written)
        values (new.org_id, 'group.created', 'Group', new.id, to_jsonb(new));
      elsif tg_op = 'DELETE' then
        if exists (select 1 from orgs where id = old.org_id) then
          insert into changes (org_id, type, resource_type, resource_id, written)
          values (old.org_id, 'group.deleted', 'Group', old.id, to_jsonb(old));
        end if;
      elsif new.data is distinct from old.data or new.display_name <> old.display_name
            or new.external_id is distinct from old.external_id then
        insert into changes (org_id, type, resource_type, resource_id, written, previous)
        values (new.org_id, 'group.updated', 'Group', new.id, to_jsonb(new), old.data);
      end if;
      return null;
    end
    $$`.execute(db);

  // The row is rebuilt from its JSON in a subquery of its own (offset 0), so that the inlined read
  // function reads a column of it instead of rebuilding it for every attribute it reads. The
  // planner's estimate of the batch is far above its cost: without jit = off it would compile the
  // statement, which takes longer than running it. The batch is derived once (materialized) and
  // joined to the rows it updates by hash: a plan cached while batches were small would otherwise
  // loop over the whole batch for each row (minutes for 20,000 changes).
  await sql`
    create or replace function scim_number_changes(
      max_rows integer, out last_position bigint, out numbered integer, out purged_through bigint)
    language plpgsql
    set enable_bitmapscan = off
    set jit = off
    set enable_nestloop = off
    as $$
    declare
      start bigint;
    begin
      numbered := 0;
      -- Nothing to number: the last position is read after that check, so that a numbering which
      -- commits between the two is in this answer (read before, it was missed until the next call).
      if not exists (select 1 from changes c where c.position is null) then
        select f.last_position, f.purged_through into last_position, purged_through from change_feed f;
        return;
      end if;
      select f.last_position, f.purged_through into start, purged_through from change_feed f for update;
      with todo as materialized (
        select c.seq, start + row_number() over (order by c.seq) as position,
          case
            when c.written is null then c.data
            when c.resource_type = 'User' then (
              select to_jsonb(r) || case when c.mode = 'delete'
                then jsonb_build_object('active', false, 'deprovisioned', true, 'deprovisioned_at', c.occurred_at)
                else '{}' end
              from (select jsonb_populate_record(null::users, c.written) as u offset 0) w
              cross join lateral scim_read_user(w.u) r)
            else (
              select to_jsonb(r)
              from (select jsonb_populate_record(null::groups, c.written) as g offset 0) w
              cross join lateral scim_read_group(w.g) r)
          end as data,
          case when c.previous is null then c.attributes
            else ${changedAttributes('c.previous', "(c.written -> 'data')")} end as attributes
        from changes c where c.position is null order by c.seq limit max_rows
      ), done as (
        update changes c
        set position = todo.position, data = todo.data, attributes = todo.attributes,
          written = null, previous = null
        from todo
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
}

/**
 * The names of the attributes that differ between two versions of a resource, sorted; an extension's
 * attributes are named with their schema URN (`urn:…:enterprise:2.0:User:department`). A copy of the
 * change feed migration's subquery as that migration wrote it: migrations do not import each other,
 * so that each keeps the SQL it wrote whatever later files do.
 */
function changedAttributes(before: string, after: string) {
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

// Going down would need every written change numbered first; the derived columns stay.
export async function down(): Promise<void> {}
