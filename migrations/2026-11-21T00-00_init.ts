import { type Kysely, sql } from 'kysely';

// Frozen once released: later changes go into new timestamped migrations.
// Every primary and unique key leads with the organization id, so the schema can be sharded by org.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('orgs')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('group_sync', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('deprovisioning', 'text', (c) =>
      c.notNull().defaultTo('deactivate').check(sql`deprovisioning in ('deactivate', 'anonymize', 'delete')`),
    )
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('scim_tokens')
    .addColumn('org_id', 'uuid', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('id', 'uuid', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('scopes', sql`text[]`, (c) => c.notNull())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'bytea', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz')
    .addColumn('revoked_at', 'timestamptz')
    .addColumn('last_used_at', 'timestamptz')
    .addColumn('last_success_at', 'timestamptz')
    .addColumn('replaces', 'uuid')
    .addColumn('replaced_by', 'uuid')
    .addPrimaryKeyConstraint('scim_tokens_pkey', ['org_id', 'id'])
    .execute();
  await db.schema.createIndex('scim_tokens_prefix').on('scim_tokens').columns(['org_id', 'prefix']).execute();

  await db.schema
    .createTable('users')
    .addColumn('org_id', 'uuid', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('id', 'uuid', (c) => c.notNull())
    .addColumn('user_name', 'text', (c) => c.notNull())
    .addColumn('external_id', 'text')
    .addColumn('display_name', 'text')
    .addColumn('active', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('data', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addColumn('deprovisioned_at', 'timestamptz')
    .addPrimaryKeyConstraint('users_pkey', ['org_id', 'id'])
    .execute();
  // RFC 7643 §4.1: userName is unique and case-insensitive. A deprovisioned user frees its userName.
  await db.schema
    .createIndex('users_org_user_name_ci')
    .on('users')
    .unique()
    .expression(sql`org_id, lower(user_name)`)
    .where(sql.ref('deprovisioned_at'), 'is', null)
    .execute();
  await db.schema
    .createIndex('users_org_external_id')
    .on('users')
    .columns(['org_id', 'external_id'])
    .execute();
  await db.schema
    .createIndex('users_org_created')
    .on('users')
    .columns(['org_id', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('groups')
    .addColumn('org_id', 'uuid', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('id', 'uuid', (c) => c.notNull())
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('external_id', 'text')
    .addColumn('data', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('groups_pkey', ['org_id', 'id'])
    .execute();
  await db.schema
    .createIndex('groups_org_display_name_ci')
    .on('groups')
    .unique()
    .expression(sql`org_id, lower(display_name)`)
    .execute();
  await db.schema
    .createIndex('groups_org_external_id')
    .on('groups')
    .columns(['org_id', 'external_id'])
    .execute();
  await db.schema
    .createIndex('groups_org_created')
    .on('groups')
    .columns(['org_id', 'created_at', 'id'])
    .execute();

  // One row per membership: adding or removing a member never rewrites the group.
  await db.schema
    .createTable('group_members')
    .addColumn('org_id', 'uuid', (c) => c.notNull())
    .addColumn('group_id', 'uuid', (c) => c.notNull())
    .addColumn('user_id', 'uuid', (c) => c.notNull())
    .addColumn('display', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('group_members_pkey', ['org_id', 'group_id', 'user_id'])
    .addForeignKeyConstraint(
      'group_members_group_fkey',
      ['org_id', 'group_id'],
      'groups',
      ['org_id', 'id'],
      (c) => c.onDelete('cascade'),
    )
    .addForeignKeyConstraint(
      'group_members_user_fkey',
      ['org_id', 'user_id'],
      'users',
      ['org_id', 'id'],
      (c) => c.onDelete('cascade'),
    )
    .execute();
  await db.schema
    .createIndex('group_members_org_user')
    .on('group_members')
    .columns(['org_id', 'user_id'])
    .execute();

  await db.schema
    .createTable('audit_events')
    .addColumn('org_id', 'uuid', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('id', 'bigint', (c) => c.notNull().generatedAlwaysAsIdentity())
    .addColumn('at', 'timestamptz', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('resource_type', 'text')
    .addColumn('resource_id', 'text')
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('request_id', 'text')
    .addPrimaryKeyConstraint('audit_events_pkey', ['org_id', 'id'])
    .execute();
  await db.schema
    .createIndex('audit_events_org_resource')
    .on('audit_events')
    .columns(['org_id', 'resource_id', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['audit_events', 'group_members', 'groups', 'users', 'scim_tokens', 'orgs']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
