import { type Kysely, sql } from 'kysely';

// Each user's row carries the ids of its groups (`group_ids`), kept by triggers on memberships, so
// that reading a user finds its groups by their primary keys instead of scanning memberships on every
// read. A group's name is read from the group, so renaming a group touches no user. Deleting a group
// touches no user either: its id stays in its members' rows, where a read, which joins the ids to the
// groups that exist, no longer finds it, and the member's next change of groups drops it.
// group_members stays the truth for filters and for a group's members. The triggers lock the users
// they rewrite in id order first, as the writes that add members do, so that two writes touching the
// same users wait for each other in line rather than in a circle.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table users add column group_ids uuid[] not null default '{}'`.execute(db);
  await sql`
    update users u set group_ids = m.ids
    from (select org_id, user_id, array_agg(group_id order by group_id) as ids from group_members group by org_id, user_id) m
    where u.org_id = m.org_id and u.id = m.user_id`.execute(db);

  // Members added: their ids join the users' own, and ids of groups deleted since are dropped.
  await sql`
    create function scim_users_joined_groups() returns trigger
    language plpgsql as $$
    begin
      perform 1 from users u join (select distinct org_id, user_id from joined) j
        on u.org_id = j.org_id and u.id = j.user_id
        order by u.org_id, u.id for no key update of u;
      update users u set group_ids = array(
          select g.id from groups g where g.org_id = u.org_id and g.id = any(u.group_ids || j.ids) order by g.id)
      from (select org_id, user_id, array_agg(group_id) as ids from joined group by org_id, user_id) j
      where u.org_id = j.org_id and u.id = j.user_id;
      return null;
    end
    $$`.execute(db);
  await sql`
    create trigger group_members_insert_users after insert on group_members
    referencing new table as joined
    for each statement execute function scim_users_joined_groups()`.execute(db);

  // Members removed from groups that still exist (a deleted group's members keep its id; see above).
  await sql`
    create function scim_users_left_groups() returns trigger
    language plpgsql as $$
    begin
      perform 1 from users u
        join (select distinct org_id, user_id from removed r where exists (
          select 1 from groups g where g.org_id = r.org_id and g.id = r.group_id)) l
        on u.org_id = l.org_id and u.id = l.user_id
        order by u.org_id, u.id for no key update of u;
      update users u set group_ids = array(select x from unnest(u.group_ids) x where x <> all(l.ids) order by x)
      from (select org_id, user_id, array_agg(group_id) as ids from removed r where exists (
          select 1 from groups g where g.org_id = r.org_id and g.id = r.group_id)
        group by org_id, user_id) l
      where u.org_id = l.org_id and u.id = l.user_id;
      return null;
    end
    $$`.execute(db);
  await sql`
    create trigger group_members_delete_users after delete on group_members
    referencing old table as removed
    for each statement execute function scim_users_left_groups()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger group_members_delete_users on group_members`.execute(db);
  await sql`drop trigger group_members_insert_users on group_members`.execute(db);
  await sql`drop function scim_users_left_groups()`.execute(db);
  await sql`drop function scim_users_joined_groups()`.execute(db);
  await sql`alter table users drop column group_ids`.execute(db);
}
