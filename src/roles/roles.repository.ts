// SQL of an organization's role mappings, default role and mode, its users' effective roles and
// entitlements, and the recomputation a catalogue or mapping change starts. Rows never leave this module.
import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/tables.js';

type RoleMode = 'multiple' | 'single';

/** A group by its id, or by its displayName (in any case) whether or not it has arrived yet. */
export type MappedGroup = { readonly id: string } | { readonly displayName: string };

interface RoleMapping {
  readonly group: MappedGroup;
  readonly role: string;
}

export interface RoleMappings {
  readonly mappings: readonly RoleMapping[];
  readonly defaultRole: string | null;
  readonly mode: RoleMode;
}

/** A use of a role that keeps it in the catalogue. */
export interface RoleUse {
  readonly orgId: string;
  readonly role: string;
  /** The mapping's group; absent: the organization's default role. */
  readonly group?: MappedGroup;
}

export interface EffectiveValue {
  readonly value: string;
  readonly sources: readonly string[];
}

const groupOf = (row: { group_id: string | null; group_display_name: string | null }): MappedGroup =>
  row.group_id === null ? { displayName: row.group_display_name! } : { id: row.group_id };

/**
 * Catalogue and mapping changes take turns: an organization's change holds its own lock and shares
 * the environment's; a change of the environment's catalogue holds the environment's.
 */
export async function lockRoles(db: Kysely<DB>, orgId: string | null): Promise<void> {
  if (orgId === null) {
    await sql`select pg_advisory_xact_lock(hashtextextended('scimd.roles', 0))`.execute(db);
    return;
  }
  await sql`select pg_advisory_xact_lock_shared(hashtextextended('scimd.roles', 0)),
    pg_advisory_xact_lock(hashtextextended('scimd.roles:' || ${orgId}::text, 0))`.execute(db);
}

export async function readMappings(db: Kysely<DB>, orgId: string): Promise<RoleMappings> {
  const rows = await db
    .selectFrom('role_mappings')
    .select(['group_id', 'group_display_name', 'role'])
    .where('org_id', '=', orgId)
    .orderBy('position')
    .execute();
  const settings = await db
    .selectFrom('role_settings')
    .select(['default_role', 'mode'])
    .where('org_id', '=', orgId)
    .executeTakeFirst();
  return {
    mappings: rows.map((r) => ({ group: groupOf(r), role: r.role })),
    defaultRole: settings?.default_role ?? null,
    mode: settings?.mode ?? 'multiple',
  };
}

export async function writeMappings(
  db: Kysely<DB>,
  orgId: string,
  given: RoleMappings,
  now: Date,
): Promise<void> {
  await db.deleteFrom('role_mappings').where('org_id', '=', orgId).execute();
  if (given.mappings.length > 0) {
    await db
      .insertInto('role_mappings')
      .values(
        given.mappings.map((m, position) => ({
          org_id: orgId,
          position,
          group_id: 'id' in m.group ? m.group.id : null,
          group_display_name: 'displayName' in m.group ? m.group.displayName : null,
          role: m.role,
        })),
      )
      .execute();
  }
  await db
    .insertInto('role_settings')
    .values({ org_id: orgId, default_role: given.defaultRole, mode: given.mode, updated_at: now })
    .onConflict((oc) =>
      oc.column('org_id').doUpdateSet({ default_role: given.defaultRole, mode: given.mode, updated_at: now }),
    )
    .execute();
}

/** Where roles of these values (in any case) are mapped or the default: in one organization, or any (null). */
export async function roleUses(
  db: Kysely<DB>,
  orgId: string | null,
  values: readonly string[],
): Promise<RoleUse[]> {
  if (values.length === 0) return [];
  const lowered = values.map((v) => v.toLowerCase());
  const { rows } = await sql<{
    org_id: string;
    role: string;
    group_id: string | null;
    group_display_name: string | null;
    is_default: boolean;
  }>`
    select org_id, role, group_id, group_display_name, false as is_default from role_mappings
    where (${orgId}::uuid is null or org_id = ${orgId}::uuid) and lower(role) = any(${lowered}::text[])
    union all
    select org_id, default_role, null, null, true from role_settings
    where (${orgId}::uuid is null or org_id = ${orgId}::uuid) and lower(default_role) = any(${lowered}::text[])
    order by 1, 5, 2`.execute(db);
  return rows.map((r) => ({
    orgId: r.org_id,
    role: r.role,
    ...(r.is_default ? {} : { group: groupOf(r) }),
  }));
}

/** The organizations whose own catalogue of the kind has one of these values (in any case). */
export async function orgsOwning(
  db: Kysely<DB>,
  kind: 'roles' | 'entitlements',
  values: readonly string[],
): Promise<string[]> {
  if (values.length === 0) return [];
  const { rows } = await sql<{ org_id: string }>`
    select distinct org_id from ${sql.table(kind)}
    where org_id is not null and lower(value) = any(${values.map((v) => v.toLowerCase())}::text[])
    order by org_id`.execute(db);
  return rows.map((r) => r.org_id);
}

/** Which of these ids are groups of the organization. */
export async function existingGroups(
  db: Kysely<DB>,
  orgId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom('groups')
    .select('id')
    .where('org_id', '=', orgId)
    .where('id', 'in', ids)
    .execute();
  return new Set(rows.map((r) => r.id));
}

/** Users recomputed in one statement: a statement stays well within the statement time limit. */
const REFRESH_BATCH = 1000;

/**
 * Recomputes the organization's users a change may affect, each once, a statement per batch of
 * REFRESH_BATCH: every user (`groups` null), or the members of the groups given by id or by displayName.
 */
export async function refreshOrg(
  db: Kysely<DB>,
  orgId: string,
  groups: { readonly ids: readonly string[]; readonly names: readonly string[] } | null,
  kinds: { readonly roles: boolean; readonly entitlements: boolean },
): Promise<void> {
  const { rows } = await sql<{ ids: string[] }>`select scim_access_refresh_targets(${orgId}::uuid,
    ${groups?.ids ?? null}::uuid[], ${groups?.names ?? null}::text[]) as ids`.execute(db);
  const ids = rows[0]?.ids ?? [];
  for (let at = 0; at < ids.length; at += REFRESH_BATCH) {
    await sql`select scim_access_refresh(${orgId}::uuid, ${ids.slice(at, at + REFRESH_BATCH)}::uuid[],
      ${kinds.roles}, ${kinds.entitlements})`.execute(db);
  }
}

/** Recomputes every organization's users, after a change of the environment's catalogue. */
export async function refreshEveryOrg(
  db: Kysely<DB>,
  kinds: { readonly roles: boolean; readonly entitlements: boolean },
): Promise<void> {
  const { rows } = await sql<{ id: string }>`select id from orgs order by id`.execute(db);
  for (const { id } of rows) await refreshOrg(db, id, null, kinds);
}

/** `role_mappings.updated` in the feed, with the organization's mappings as they now are. */
export async function recordMappingsUpdated(db: Kysely<DB>, orgId: string, now: RoleMappings): Promise<void> {
  await sql`insert into changes (org_id, type, resource_type, resource_id, data)
    values (${orgId}, 'role_mappings.updated', 'Org', ${orgId}, ${JSON.stringify(now)}::jsonb)`.execute(db);
}

/** A user's effective roles and entitlements; undefined when the organization has no such user. */
export async function userAccess(
  db: Kysely<DB>,
  orgId: string,
  userId: string,
): Promise<{ roles: EffectiveValue[]; entitlements: EffectiveValue[] } | undefined> {
  const user = await db
    .selectFrom('users')
    .select('id')
    .where('org_id', '=', orgId)
    .where('id', '=', userId)
    .executeTakeFirst();
  if (!user) return undefined;
  const roles = await db
    .selectFrom('user_roles')
    .select(['role as value', 'sources'])
    .where('org_id', '=', orgId)
    .where('user_id', '=', userId)
    .orderBy('role')
    .execute();
  const entitlements = await db
    .selectFrom('user_entitlements')
    .select(['entitlement as value', 'sources'])
    .where('org_id', '=', orgId)
    .where('user_id', '=', userId)
    .orderBy('entitlement')
    .execute();
  return { roles, entitlements };
}
