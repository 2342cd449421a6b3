import type { Kysely } from 'kysely';

// When each group's members last changed, kept apart from the group's row: concurrent member changes
// of one group would otherwise all wait on that row. Each connection writes its own shard, so they
// do not wait on each other either. A group's meta.lastModified is the latest of its row's time and
// these.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('group_member_changes')
    .addColumn('org_id', 'uuid', (c) => c.notNull())
    .addColumn('group_id', 'uuid', (c) => c.notNull())
    .addColumn('shard', 'smallint', (c) => c.notNull())
    .addColumn('changed_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('group_member_changes_pkey', ['org_id', 'group_id', 'shard'])
    .addForeignKeyConstraint(
      'group_member_changes_group_fkey',
      ['org_id', 'group_id'],
      'groups',
      ['org_id', 'id'],
      (c) => c.onDelete('cascade'),
    )
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('group_member_changes').execute();
}
