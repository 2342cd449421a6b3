// An organization's own schema extensions, as the admin API and the CLI see them: written whole by
// PUT, refused when they would make stored values invalid, removed by DELETE (values stay, hidden).
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { AdminError, invalidRequest, notFound } from '../http/admin-errors.js';
import { refuseUnstorable } from '../http/parse-body.js';
import * as orgsRepo from '../orgs/orgs.repository.js';
import { lockOrg } from '../orgs/orgs.repository.js';
import {
  CUSTOM_SCHEMA_LIMITS,
  type CustomSchema,
  InvalidSchemaError,
  parseCustomSchema,
  storedDefinition,
} from '../schema/custom-schemas.js';
import type { AttributeDef } from '../schema/types.js';
import * as repo from './org-schemas.repository.js';

export interface SchemaView {
  readonly id: string;
  readonly resourceType: string;
  readonly name: string;
  readonly description: string;
  readonly attributes: unknown;
  readonly createdAt: string;
  readonly updatedAt: string;
}

function render(stored: repo.StoredSchema): SchemaView {
  return {
    ...(storedDefinition(stored.schema) as Omit<SchemaView, 'createdAt' | 'updatedAt'>),
    createdAt: stored.createdAt.toISOString(),
    updatedAt: stored.updatedAt.toISOString(),
  };
}

async function existingOrg(db: Kysely<DB>, orgId: string): Promise<void> {
  if (!(await orgsRepo.findOrg(db, orgId))) throw notFound(`Organization ${orgId} not found`);
}

export async function listSchemas(db: Kysely<DB>, orgId: string): Promise<SchemaView[]> {
  await existingOrg(db, orgId);
  return (await repo.listOrgSchemas(db, orgId)).map(render);
}

export async function getSchema(db: Kysely<DB>, orgId: string, urn: string): Promise<SchemaView> {
  await existingOrg(db, orgId);
  const found = (await repo.listOrgSchemas(db, orgId)).find(
    (s) => s.schema.id.toLowerCase() === urn.toLowerCase(),
  );
  if (!found) throw notFound(`Organization ${orgId} has no schema ${urn}`);
  return render(found);
}

/**
 * Writes the schema at `urn` (in the caller's transaction, which announces the change). A schema
 * replacing another may add attributes and change descriptions and characteristics freely, but not
 * in a way stored values would break: a changed type or plurality of an attribute that resources
 * carry, a new `required` that resources lack. Those are refused with the count of resources in the way.
 */
export async function putSchema(
  db: Kysely<DB>,
  orgId: string,
  urn: string,
  body: unknown,
): Promise<{ schema: SchemaView; created: boolean }> {
  await existingOrg(db, orgId);
  refuseUnstorable(body);
  let schema: CustomSchema;
  try {
    schema = parseCustomSchema(urn, body);
  } catch (error) {
    if (error instanceof InvalidSchemaError) throw invalidRequest(error.message);
    throw error;
  }
  if (schema.attributes.some((a) => a.subAttributes?.some((s) => s.uniqueness === 'server'))) {
    throw invalidRequest('uniqueness: server is offered on top-level attributes, not on sub-attributes');
  }
  // One schema change at a time per organization: the checks below see every earlier one.
  await lockOrg(db, orgId);
  const others = await repo.listOrgSchemas(db, orgId);
  const previous = others.find((s) => s.schema.id.toLowerCase() === urn.toLowerCase())?.schema;
  const rest = others.filter((s) => s.schema !== previous).map((s) => s.schema);
  if (!previous && rest.length >= CUSTOM_SCHEMA_LIMITS.schemas) {
    throw invalidRequest(`an organization has at most ${CUSTOM_SCHEMA_LIMITS.schemas} schemas of its own`);
  }
  const nested = rest.find(
    (s) =>
      s.id.toLowerCase().startsWith(`${schema.id.toLowerCase()}:`) ||
      schema.id.toLowerCase().startsWith(`${s.id.toLowerCase()}:`),
  );
  if (nested) {
    throw invalidRequest(
      `id: ${schema.id} and ${nested.id} would be ambiguous (one extends the other's URN); choose another URN`,
    );
  }
  if (previous && previous.resourceType !== schema.resourceType) {
    throw invalidRequest(
      `resourceType: ${schema.id} extends ${previous.resourceType}; delete it first to extend ${schema.resourceType}`,
    );
  }
  await refuseBreakingChanges(db, orgId, previous, schema);
  const { created, stored } = await repo.putOrgSchema(db, orgId, schema, new Date());
  await repo.bumpSchemasVersion(db, orgId);
  return { schema: render(stored), created };
}

/** Removes the schema; resources keep its values, unseen, and show them again if it comes back. */
export async function deleteSchema(db: Kysely<DB>, orgId: string, urn: string): Promise<void> {
  await existingOrg(db, orgId);
  if (!(await repo.deleteOrgSchema(db, orgId, urn)))
    throw notFound(`Organization ${orgId} has no schema ${urn}`);
  await repo.bumpSchemasVersion(db, orgId);
}

async function refuseBreakingChanges(
  db: Kysely<DB>,
  orgId: string,
  previous: CustomSchema | undefined,
  next: CustomSchema,
): Promise<void> {
  const table = next.resourceType === 'User' ? 'users' : 'groups';
  for (const attr of next.attributes) {
    const before = previous?.attributes.find((a) => a.name.toLowerCase() === attr.name.toLowerCase());
    if (before && changesShape(before, attr)) {
      const carrying = await repo.countHolding(db, table, orgId, next.id, before.name);
      if (carrying > 0) {
        throw conflict(
          `${attr.name}: ${carrying} ${next.resourceType.toLowerCase()}(s) hold a value of its present type or plurality; clear it first, or add a new attribute`,
        );
      }
    }
    if (attr.uniqueness === 'server' && before?.uniqueness !== 'server') {
      const shared = await repo.countSharingValues(db, table, orgId, next.id, attr);
      if (shared > 0) {
        throw conflict(`${attr.name}: ${shared} ${table} share a value with another; make them unique first`);
      }
    }
    if (attr.required && !before?.required) {
      const lacking = await repo.countLacking(db, table, orgId, next.id, attr.name);
      if (lacking > 0) {
        throw conflict(
          `${attr.name}: ${lacking} ${next.resourceType.toLowerCase()}(s) carrying ${next.id} have no value for it; it cannot become required`,
        );
      }
    }
  }
}

/** Whether stored values of `before` could be invalid as `after`. */
function changesShape(before: AttributeDef, after: AttributeDef): boolean {
  if (before.type !== after.type || before.multiValued !== after.multiValued) return true;
  return (after.subAttributes ?? []).some((sub) => {
    const old = before.subAttributes?.find((s) => s.name.toLowerCase() === sub.name.toLowerCase());
    return old !== undefined && (old.type !== sub.type || old.multiValued !== sub.multiValued);
  });
}

const conflict = (message: string) => new AdminError(409, 'conflict', message);
