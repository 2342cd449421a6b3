// SQL of organizations' own schemas. Rows never leave this module.
import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/tables.js';
import { type CustomSchema, customSchemaOf, storedDefinition } from '../schema/custom-schemas.js';
import type { AttributeDef } from '../schema/types.js';

export interface StoredSchema {
  readonly schema: CustomSchema;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** The organization's schemas, oldest first (the order /Schemas lists them in). */
export async function listOrgSchemas(db: Kysely<DB>, orgId: string): Promise<StoredSchema[]> {
  const rows = await db
    .selectFrom('org_schemas')
    .select(['definition', 'created_at', 'updated_at'])
    .where('org_id', '=', orgId)
    .orderBy('created_at')
    .orderBy('urn')
    .execute();
  return rows.map((r) => ({
    schema: customSchemaOf(r.definition),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  }));
}

/** Writes a schema (a new one, or over the one of the same URN in any case); whether it was new. */
export async function putOrgSchema(
  db: Kysely<DB>,
  orgId: string,
  schema: CustomSchema,
  now: Date,
): Promise<{ created: boolean; stored: StoredSchema }> {
  const definition = JSON.stringify(storedDefinition(schema));
  const stored = (row: { created_at: Date; updated_at: Date }) => ({
    schema,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  });
  const replaced = await db
    .updateTable('org_schemas')
    .set({ urn: schema.id, resource_type: schema.resourceType, definition, updated_at: now })
    .where('org_id', '=', orgId)
    .where(sql`lower(urn)`, '=', schema.id.toLowerCase())
    .returning(['created_at', 'updated_at'])
    .executeTakeFirst();
  if (replaced) return { created: false, stored: stored(replaced) };
  const inserted = await db
    .insertInto('org_schemas')
    .values({
      org_id: orgId,
      urn: schema.id,
      resource_type: schema.resourceType,
      definition,
      created_at: now,
      updated_at: now,
    })
    .returning(['created_at', 'updated_at'])
    .executeTakeFirstOrThrow();
  return { created: true, stored: stored(inserted) };
}

export async function deleteOrgSchema(db: Kysely<DB>, orgId: string, urn: string): Promise<boolean> {
  const result = await db
    .deleteFrom('org_schemas')
    .where('org_id', '=', orgId)
    .where(sql`lower(urn)`, '=', urn.toLowerCase())
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** A schema change becomes the organization's next version: token checks carry it to every process. */
export async function bumpSchemasVersion(db: Kysely<DB>, orgId: string): Promise<void> {
  await db
    .updateTable('orgs')
    .set((eb) => ({ schemas_version: eb('schemas_version', '+', 1) }))
    .where('id', '=', orgId)
    .execute();
}

type Table = 'users' | 'groups';

/** How many resources of the table hold a value of the extension's attribute. */
export async function countHolding(db: Kysely<DB>, table: Table, orgId: string, urn: string, name: string) {
  const { rows } = await sql<{ n: number }>`
    select count(*)::integer as n from ${sql.table(table)}
    where org_id = ${orgId} and data -> ${urn} ? ${name}`.execute(db);
  return rows[0]!.n;
}

/** How many resources carry the extension without a value of the attribute. */
export async function countLacking(db: Kysely<DB>, table: Table, orgId: string, urn: string, name: string) {
  const { rows } = await sql<{ n: number }>`
    select count(*)::integer as n from ${sql.table(table)}
    where org_id = ${orgId} and data ? ${urn} and not (data -> ${urn} ? ${name})`.execute(db);
  return rows[0]!.n;
}

/**
 * How many resources (visible users, or groups) share a value of the attribute with another: compared
 * lower-cased for a string that is not caseExact.
 */
export async function countSharingValues(
  db: Kysely<DB>,
  table: Table,
  orgId: string,
  urn: string,
  attribute: AttributeDef,
): Promise<number> {
  const held =
    attribute.type === 'string' && !attribute.caseExact
      ? sql`lower(data -> ${urn} ->> ${attribute.name})`
      : sql`data -> ${urn} -> ${attribute.name}`;
  const { rows } = await sql<{ n: number }>`
    select coalesce(sum(n), 0)::integer as n from (
      select count(*) as n from ${sql.table(table)}
      where org_id = ${orgId} and ${table === 'users' ? sql`deprovisioned_at is null` : sql`true`}
        and data -> ${urn} ? ${attribute.name}
      group by ${held} having count(*) > 1) d`.execute(db);
  return rows[0]!.n;
}
