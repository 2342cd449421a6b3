import { type Kysely, sql } from 'kysely';

// An organization's own schema extensions (custom attributes): RFC 7643 §7 definitions, each
// extending User or Group. `orgs.schemas_version` moves with every change, so that a process knows
// from the organization's row (read with each token check) whether what it built is current.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table orgs add column schemas_version integer not null default 0`.execute(db);
  await sql`
    create table org_schemas (
      org_id uuid not null references orgs (id) on delete cascade,
      urn text not null,
      resource_type text not null check (resource_type in ('User', 'Group')),
      definition jsonb not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      primary key (org_id, urn)
    )`.execute(db);
  // URNs compare case-insensitively (RFC 7643 §2.1): one schema per URN, whatever its case.
  await sql`create unique index org_schemas_urn_ci on org_schemas (org_id, lower(urn))`.execute(db);

  // A user's values of organizations' own extensions, lower-cased: the stored object without the core
  // attributes and the enterprise extension (the keys a stored user can have besides those URNs).
  // Indexed only where it is not empty, so that a user without any costs the index nothing (a query
  // names the same condition, for the planner to use it), with statistics of its own, so that the
  // planner sees how rare a value is. An equality filter on a custom attribute probes it for
  // `{urn: {attribute: value}}`, one GIN entry per value.
  await sql`
    create function scim_extension_values(data jsonb) returns jsonb
    language sql immutable parallel safe
    as $$
      select lower((data - ${sql.lit(`{${[...CORE_USER_ATTRIBUTES, ENTERPRISE_USER].join(',')}}`)}::text[])::text)::jsonb
    $$`.execute(db);
  await sql`create index users_extension_values on users
    using gin (scim_extension_values(data) jsonb_path_ops) where scim_extension_values(data) <> '{}'::jsonb`.execute(
    db,
  );
  await sql`create statistics users_extension_values_stats on (scim_extension_values(data)) from users`.execute(
    db,
  );
}

/** The core User schema's attributes when this migration was written (RFC 7643 §4.1). */
const CORE_USER_ATTRIBUTES = [
  'externalId',
  'userName',
  'name',
  'displayName',
  'nickName',
  'profileUrl',
  'title',
  'userType',
  'preferredLanguage',
  'locale',
  'timezone',
  'active',
  'password',
  'emails',
  'phoneNumbers',
  'ims',
  'photos',
  'addresses',
  'groups',
  'entitlements',
  'roles',
  'x509Certificates',
];
const ENTERPRISE_USER = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop statistics users_extension_values_stats`.execute(db);
  await sql`drop index users_extension_values`.execute(db);
  await sql`drop function scim_extension_values(jsonb)`.execute(db);
  await sql`drop table org_schemas`.execute(db);
  await sql`alter table orgs drop column schemas_version`.execute(db);
}
