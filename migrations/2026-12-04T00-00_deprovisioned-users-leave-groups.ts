import { type Kysely, sql } from 'kysely';

// A user deprovisioned with its row kept (deactivate, anonymize) leaves every group in a trigger, not
// in a step of the deprovisioning statement: a statement sees the rows committed when it began, a
// trigger's delete those committed when the user's row was written. A member row added by a write
// that held the user while the deprovisioning waited for it is gone with the others. The trigger
// fires only for updates that set deprovisioned_at, not for every update of a user.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function scim_user_left_groups() returns trigger
    language plpgsql as $$
    begin
      delete from group_members where org_id = new.org_id and user_id = new.id;
      return null;
    end
    $$`.execute(db);
  await sql`
    create trigger users_leave_groups after update of deprovisioned_at on users
    for each row when (old.deprovisioned_at is null and new.deprovisioned_at is not null)
    execute function scim_user_left_groups()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger users_leave_groups on users`.execute(db);
  await sql`drop function scim_user_left_groups()`.execute(db);
}
