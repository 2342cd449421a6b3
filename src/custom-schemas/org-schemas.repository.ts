// SQL of organizations' own schemas. Rows never leave this module.
import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/tables.js';
import { type CustomSchema, customSchemaOf, storedDefinition } from '../schema/custom-schemas.js';

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
