// Kysely table types. Row types stay inside repositories; services see resources.
import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export type DeprovisioningMode = 'deactivate' | 'anonymize' | 'delete';
export type TokenScope = 'users' | 'groups';

export interface OrgsTable {
  id: string;
  name: string;
  group_sync: boolean;
  deprovisioning: DeprovisioningMode;
  /** Signs this organization's paging cursors. */
  cursor_key: ColumnType<Buffer, Buffer | undefined, never>;
  /** Moves with every change to the organization's own schemas (org_schemas). */
  schemas_version: Generated<number>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

interface OrgSchemasTable {
  org_id: string;
  urn: string;
  resource_type: 'User' | 'Group';
  /** The RFC 7643 §7 schema, every characteristic spelled out (custom-schemas.ts). */
  definition: ColumnType<unknown, string, string>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ScimTokensTable {
  org_id: string;
  id: string;
  name: string;
  scopes: string[];
  /** The first characters of the secret, shown in listings and used to find the row. */
  prefix: string;
  /** SHA-256 of the whole secret. The secret itself is never stored. */
  secret_hash: Buffer;
  created_at: Timestamp;
  expires_at: NullableTimestamp;
  revoked_at: NullableTimestamp;
  last_used_at: NullableTimestamp;
  last_success_at: NullableTimestamp;
  replaces: string | null;
  replaced_by: string | null;
}

export interface UsersTable {
  org_id: string;
  id: string;
  user_name: string;
  external_id: string | null;
  display_name: string | null;
  active: boolean;
  /** The SCIM attributes of the user (core and extensions) as stored; id and meta are columns. */
  data: ColumnType<Record<string, unknown>, string, string>;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Set when a DELETE deprovisioned the user in `deactivate` or `anonymize` mode. */
  deprovisioned_at: NullableTimestamp;
}

export interface GroupsTable {
  org_id: string;
  id: string;
  display_name: string;
  external_id: string | null;
  data: ColumnType<Record<string, unknown>, string, string>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

interface GroupMembersTable {
  org_id: string;
  group_id: string;
  user_id: string;
  /** A display value the IdP sent with the member, echoed back as `display`. */
  display: string | null;
  created_at: Timestamp;
}

interface AuditEventsTable {
  org_id: string;
  id: Generated<string>;
  at: Timestamp;
  /** `admin` or `token:<id>` */
  actor: string;
  action: string;
  resource_type: string | null;
  resource_id: string | null;
  status: number;
  request_id: string | null;
}

/** Per organization and shard: its users (not deprovisioned) and groups, and their versions. */
interface OrgCountsTable {
  org_id: string;
  shard: number;
  users: ColumnType<string, number | undefined, number>;
  groups: ColumnType<string, number | undefined, number>;
  users_version: ColumnType<string, number | undefined, number>;
  groups_version: ColumnType<string, number | undefined, number>;
}

/** Per group and shard: when a statement last changed the group's members. */
interface GroupMemberChangesTable {
  org_id: string;
  group_id: string;
  shard: number;
  changed_at: Timestamp;
}

/** One change to a user, a group, its members or an organization (migrations/…_change-feed.ts). */
export interface ChangesTable {
  /** In the order changes were written; not the order they committed. */
  seq: Generated<string>;
  /** In the order they committed, once numbered (scim_number_changes); the feed's cursor. */
  position: string | null;
  org_id: string;
  type: string;
  resource_type: string;
  resource_id: string;
  occurred_at: Timestamp;
  /** The names of the attributes an update changed. */
  attributes: string[] | null;
  /** The deprovisioning mode of a user.deprovisioned change. */
  mode: string | null;
  /** The resource as the feed shows it; derived when the change is numbered. */
  data: ColumnType<Record<string, unknown> | null, string, string>;
  /** Until numbered: the row as written, as JSON (numbering derives `data` from it). */
  written: ColumnType<Record<string, unknown> | null, string, string>;
  /** Until numbered: an update's attributes before it (numbering derives `attributes` from them). */
  previous: ColumnType<Record<string, unknown> | null, string, string>;
}

interface ChangeFeedTable {
  singleton: boolean;
  last_position: string;
  purged_through: string;
}

export interface ApiKeysTable {
  id: string;
  name: string;
  prefix: string;
  /** SHA-256 of the whole key; the key itself is never stored. */
  secret_hash: Buffer;
  created_at: Timestamp;
  revoked_at: NullableTimestamp;
  last_used_at: NullableTimestamp;
}

export interface WebhookEndpointsTable {
  id: string;
  /** The organization whose changes it receives; null: every organization's. */
  org_id: string | null;
  url: string;
  events: string[];
  description: string;
  state: ColumnType<string, string | undefined, string>;
  disabled_reason: ColumnType<string | null, string | null | undefined, string | null>;
  /** The signing secret, encrypted (webhooks/secret-box.ts). */
  secret_box: Buffer;
  /** The last feed position turned into deliveries. */
  feed_position: string;
  leased_by: ColumnType<string | null, string | null | undefined, string | null>;
  leased_until: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface WebhookDeliveriesTable {
  endpoint_id: string;
  position: string;
  change_id: string;
  resource_id: string;
  type: string;
  state: string;
  attempts: number;
  next_attempt_at: Timestamp;
  last_status: number | null;
  last_error: string | null;
  last_latency_ms: number | null;
  delivered_at: NullableTimestamp;
  created_at: Timestamp;
}

/** Requests an organization's IdP made, by minute, token, operation and outcome (src/health/). */
interface SyncCountsTable {
  org_id: string;
  /** Null: a credential that matched no token of the organization. */
  token_id: string | null;
  minute: Timestamp;
  operation: string;
  outcome: string;
  requests: number;
  last_at: Timestamp;
}

/** An organization's recent failed SCIM requests, without query strings or attribute values. */
interface SyncFailuresTable {
  id: Generated<string>;
  org_id: string;
  token_id: string | null;
  at: Timestamp;
  method: string;
  path: string;
  status: number;
  scim_type: string | null;
  detail: string;
  reason: string | null;
  request_id: string;
}

export interface SetupLinksTable {
  id: string;
  org_id: string;
  /** The start of the link's secret, in clear, to tell links apart in a listing. */
  prefix: string;
  /** SHA-256 of the link's secret; the link itself is never stored. */
  secret_hash: Buffer;
  note: string;
  /** `admin` or `console:<sessionId>`. */
  created_by: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  revoked_at: NullableTimestamp;
  last_opened_at: NullableTimestamp;
}

interface ConsoleSessionsTable {
  id: string;
  /** SHA-256 of the cookie's secret. */
  secret_hash: Buffer;
  /** Null for an operator's session; the link it was opened from otherwise. */
  setup_link_id: string | null;
  /** An operator's session: a fingerprint of the admin token it was signed in with. */
  admin_fingerprint: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
}

/** A role of the catalogue: the environment's (org_id null) or one organization's own. */
interface RolesTable {
  id: string;
  org_id: string | null;
  value: string;
  display_name: string;
  description: string;
  /** In `single` mode a user keeps its role of highest priority. */
  priority: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** An entitlement of the catalogue: the environment's (org_id null) or one organization's own. */
interface EntitlementsTable {
  id: string;
  org_id: string | null;
  value: string;
  display_name: string;
  description: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** An organization's mapping of a group (by id, or by displayName in any case) to a role. */
interface RoleMappingsTable {
  org_id: string;
  /** The order the mappings were given in. */
  position: number;
  group_id: string | null;
  group_display_name: string | null;
  role: string;
}

/** An organization's default role and mode; no row: no default, `multiple`. */
interface RoleSettingsTable {
  org_id: string;
  default_role: string | null;
  mode: 'multiple' | 'single';
  updated_at: Timestamp;
}

/** A user's effective role, with what gives it (`idp`, `group:<id>`, `default`). */
interface UserRolesTable {
  org_id: string;
  user_id: string;
  role: string;
  sources: string[];
}

/** A user's effective entitlement, with what gives it (`idp`). */
interface UserEntitlementsTable {
  org_id: string;
  user_id: string;
  entitlement: string;
  sources: string[];
}

export interface DB {
  orgs: OrgsTable;
  org_schemas: OrgSchemasTable;
  scim_tokens: ScimTokensTable;
  users: UsersTable;
  groups: GroupsTable;
  group_members: GroupMembersTable;
  audit_events: AuditEventsTable;
  org_counts: OrgCountsTable;
  group_member_changes: GroupMemberChangesTable;
  changes: ChangesTable;
  change_feed: ChangeFeedTable;
  api_keys: ApiKeysTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  sync_counts: SyncCountsTable;
  sync_failures: SyncFailuresTable;
  setup_links: SetupLinksTable;
  console_sessions: ConsoleSessionsTable;
  roles: RolesTable;
  entitlements: EntitlementsTable;
  role_mappings: RoleMappingsTable;
  role_settings: RoleSettingsTable;
  user_roles: UserRolesTable;
  user_entitlements: UserEntitlementsTable;
}
