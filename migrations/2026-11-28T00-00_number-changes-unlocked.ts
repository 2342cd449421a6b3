import { type Kysely, sql } from 'kysely';

// Numbering takes the feed's row lock only when there is something to number. Readers and webhook
// dispatchers call it before every read; with nothing new, it is now a read that writes nothing (a
// row lock is a write: it dirties the row and makes the transaction commit one more WAL record).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace function scim_number_changes(
      max_rows integer, out last_position bigint, out numbered integer, out purged_through bigint)
    language plpgsql
    set enable_bitmapscan = off
    as $$
    declare
      start bigint;
    begin
      numbered := 0;
      select f.last_position, f.purged_through into last_position, purged_through from change_feed f;
      if not exists (select 1 from changes c where c.position is null) then
        return;
      end if;
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
}

// The function without the unlocked check numbers the same way: going down leaves it in place.
export async function down(): Promise<void> {}
