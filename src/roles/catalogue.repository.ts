// SQL of the roles and entitlements catalogues: the environment's (org_id null) and each organization's
// own. Rows never leave this module.
import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/tables.js';

export type CatalogueKind = 'roles' | 'entitlements';
type CatalogueScope = 'environment' | 'organization';

/** A role or an entitlement as the catalogue holds it; `priority` is a role's only. */
export interface CatalogueEntry {
  readonly id: string;
  readonly value: string;
  readonly displayName: string;
  readonly description: string;
  readonly priority?: number;
  readonly scope: CatalogueScope;
}

/** What a PUT gives for one entry; `priority` is ignored for entitlements. */
export interface CatalogueInput {
  readonly value: string;
  readonly displayName: string;
  readonly description: string;
  readonly priority: number;
}

interface Row {
  id: string;
  org_id: string | null;
  value: string;
  display_name: string;
  description: string;
  priority: number | null;
}

const toEntry = (row: Row): CatalogueEntry => ({
  id: row.id,
  value: row.value,
  displayName: row.display_name,
  description: row.description,
  ...(row.priority === null ? {} : { priority: row.priority }),
  scope: row.org_id === null ? 'environment' : 'organization',
});

const priorityOf = (kind: CatalogueKind) => (kind === 'roles' ? sql`priority` : sql`null::integer`);

/**
 * An organization's whole catalogue of a kind: the environment's entries, then its own, each by value.
 * What SCIM /Roles and /Entitlements list and what `roles` and `entitlements` values are checked against.
 */
export async function effectiveCatalogue(
  db: Kysely<DB>,
  orgId: string,
  kind: CatalogueKind,
): Promise<CatalogueEntry[]> {
  const { rows } = await sql<Row>`
    select id, org_id, value, display_name, description, ${priorityOf(kind)} as priority
    from ${sql.table(kind)}
    where org_id is null or org_id = ${orgId}
    order by org_id nulls first, lower(value), value`.execute(db);
  return rows.map(toEntry);
}

/** The entries of one scope only: the environment's (`orgId` null) or an organization's own. */
export async function scopeCatalogue(
  db: Kysely<DB>,
  orgId: string | null,
  kind: CatalogueKind,
): Promise<CatalogueEntry[]> {
  const { rows } = await sql<Row>`
    select id, org_id, value, display_name, description, ${priorityOf(kind)} as priority
    from ${sql.table(kind)}
    where org_id is not distinct from ${orgId}::uuid
    order by lower(value), value`.execute(db);
  return rows.map(toEntry);
}

/**
 * Makes a scope's entries those given (values unique in any case, checked by the caller): an entry
 * keeps its id while its value stays, in any case.
 */
export async function replaceScopeCatalogue(
  db: Kysely<DB>,
  orgId: string | null,
  kind: CatalogueKind,
  entries: readonly CatalogueInput[],
  now: Date,
): Promise<void> {
  const values = entries.map((e) => e.value.toLowerCase());
  await sql`
    delete from ${sql.table(kind)}
    where org_id is not distinct from ${orgId}::uuid and lower(value) <> all(${values}::text[])`.execute(db);
  const given = JSON.stringify(
    entries.map((e) => ({
      value: e.value,
      display_name: e.displayName,
      description: e.description,
      priority: e.priority,
    })),
  );
  if (kind === 'roles') {
    await sql`
      insert into roles (id, org_id, value, display_name, description, priority, created_at, updated_at)
      select gen_random_uuid(), ${orgId}::uuid, e.value, e.display_name, e.description, e.priority, ${now}, ${now}
      from jsonb_to_recordset(${given}::jsonb) as e(value text, display_name text, description text, priority integer)
      on conflict (org_id, lower(value)) do update
      set value = excluded.value, display_name = excluded.display_name, description = excluded.description,
        priority = excluded.priority, updated_at = excluded.updated_at
      where (roles.value, roles.display_name, roles.description, roles.priority)
        is distinct from (excluded.value, excluded.display_name, excluded.description, excluded.priority)`.execute(
      db,
    );
  } else {
    await sql`
      insert into entitlements (id, org_id, value, display_name, description, created_at, updated_at)
      select gen_random_uuid(), ${orgId}::uuid, e.value, e.display_name, e.description, ${now}, ${now}
      from jsonb_to_recordset(${given}::jsonb) as e(value text, display_name text, description text)
      on conflict (org_id, lower(value)) do update
      set value = excluded.value, display_name = excluded.display_name, description = excluded.description,
        updated_at = excluded.updated_at
      where (entitlements.value, entitlements.display_name, entitlements.description)
        is distinct from (excluded.value, excluded.display_name, excluded.description)`.execute(db);
  }
}
