import { type Kysely, sql } from 'kysely';

// A write no longer locks its organization's row. A foreign key to `orgs` made every user or group
// created, and every audit entry, take a KEY SHARE lock on that one row: a heap write of the row (and,
// with writers at once, a multixact of them all) per write. The organization's count shard, which
// every create updates in the same statement and which keeps its own key to `orgs`, now guards a
// create against a concurrent deletion; the deletion removes the rows itself (orgs.repository.ts).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table users drop constraint users_org_id_fkey`.execute(db);
  await sql`alter table groups drop constraint groups_org_id_fkey`.execute(db);
  await sql`alter table audit_events drop constraint audit_events_org_id_fkey`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['users', 'groups', 'audit_events'])
    await sql`alter table ${sql.table(table)} add constraint ${sql.raw(`${table}_org_id_fkey`)}
      foreign key (org_id) references orgs (id) on delete cascade`.execute(db);
}
