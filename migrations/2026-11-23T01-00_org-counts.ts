import { type Kysely, sql } from 'kysely';

// How many users (not deprovisioned) and groups each organization has, for totalResults in O(1).
// An organization's count is spread over rows (shards): each write changes the row of its
// connection's shard, so concurrent creates in one organization do not queue behind one row lock.
// `*_version` grows with every create and removal: an unchanged sum means unchanged positions.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('org_counts')
    .addColumn('org_id', 'uuid', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('shard', 'smallint', (c) => c.notNull())
    .addColumn('users', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('groups', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('users_version', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('groups_version', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('org_counts_pkey', ['org_id', 'shard'])
    .execute();
  await sql`
    insert into org_counts (org_id, shard, users, groups)
    select o.id, 0,
      (select count(*) from users u where u.org_id = o.id and u.deprovisioned_at is null),
      (select count(*) from groups g where g.org_id = o.id)
    from orgs o`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('org_counts').execute();
}
