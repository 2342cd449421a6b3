import { type Kysely, sql } from 'kysely';

// Roles and entitlements: the product's catalogue of each (the environment's, org_id null, for every
// organization, and an organization's own), an organization's mappings from its IdP groups to roles
// with its default role and mode, and every user's effective roles and entitlements, each with the
// sources that give it (`idp`, `group:<id>`, `default`). A value is unique within its scope, in any
// case (RFC 7643 §4.1.2: `value` of roles and entitlements is not caseExact).
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const kind of ['roles', 'entitlements'] as const) {
    await sql`
      create table ${sql.id(kind)} (
        id uuid primary key,
        org_id uuid references orgs (id) on delete cascade,
        value text not null,
        display_name text not null,
        description text not null default '',
        ${kind === 'roles' ? sql`priority integer not null default 0,` : sql``}
        created_at timestamptz not null,
        updated_at timestamptz not null
      )`.execute(db);
    await sql`create unique index ${sql.id(`${kind}_scope_value`)}
      on ${sql.id(kind)} (org_id, lower(value)) nulls not distinct`.execute(db);
  }

  // An organization's mappings, in the order given: a group by id, or by displayName (compared in
  // any case, as groups' displayNames are unique), to a role of its catalogue.
  await sql`
    create table role_mappings (
      org_id uuid not null references orgs (id) on delete cascade,
      position integer not null,
      group_id uuid,
      group_display_name text,
      role text not null,
      primary key (org_id, position),
      check ((group_id is null) <> (group_display_name is null))
    )`.execute(db);
  await sql`create index role_mappings_group on role_mappings (org_id, group_id) where group_id is not null`.execute(
    db,
  );
  await sql`create index role_mappings_group_name on role_mappings (org_id, lower(group_display_name))
    where group_display_name is not null`.execute(db);

  // The role of a user nothing else gives one to, and whether a user keeps every role or only the
  // one of highest priority. No row: no default, every role.
  await sql`
    create table role_settings (
      org_id uuid primary key references orgs (id) on delete cascade,
      default_role text,
      mode text not null default 'multiple' check (mode in ('multiple', 'single')),
      updated_at timestamptz not null
    )`.execute(db);

  // Effective values, kept current by the write that changes them.
  for (const [table, column] of [
    ['user_roles', 'role'],
    ['user_entitlements', 'entitlement'],
  ] as const) {
    await sql`
      create table ${sql.id(table)} (
        org_id uuid not null,
        user_id uuid not null,
        ${sql.id(column)} text not null,
        sources text[] not null,
        primary key (org_id, user_id, ${sql.id(column)}),
        foreign key (org_id, user_id) references users (org_id, id) on delete cascade
      )`.execute(db);
    await sql`create index ${sql.id(`${table}_value`)} on ${sql.id(table)} (org_id, ${sql.id(column)})`.execute(
      db,
    );
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table user_entitlements, user_roles, role_settings, role_mappings, entitlements, roles`.execute(
    db,
  );
}
