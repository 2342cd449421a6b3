// `uniqueness: server` on an organization's own attributes: a value no other resource of the type in
// the organization holds (deprovisioned users hold none, as they hold no userName). Checked in the
// write's transaction under a lock on the value, so two writes racing for one value cannot both pass.
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { UniquenessError } from '../http/scim-errors.js';
import { derivedOnce, standardSchemas } from '../schema/registry.js';
import type { AttributeDef, ResourceTypeDef } from '../schema/types.js';
import { lockValue, valueHeld } from './custom-uniqueness.repository.js';
import type { ScimResource } from './validate.js';

interface UniqueAttribute {
  readonly schema: string;
  readonly attribute: AttributeDef;
}

/** The single-valued attributes of the type's own extensions that must be unique in the organization. */
export const uniqueAttributesOf = derivedOnce((type: ResourceTypeDef): readonly UniqueAttribute[] =>
  type.schemaExtensions
    .filter((e) => !standardSchemas.includes(e.definition))
    .flatMap((e) =>
      e.definition.attributes
        .filter((a) => a.uniqueness === 'server' && !a.multiValued && a.type !== 'complex')
        .map((attribute) => ({ schema: e.schema, attribute })),
    ),
);

/** The value as it compares: lower-cased unless caseExact, for text. */
function comparable(attribute: AttributeDef, value: unknown): unknown {
  return typeof value === 'string' && !attribute.caseExact ? value.toLowerCase() : value;
}

/**
 * Takes the values `attributes` holds for the type's unique attributes, for the user `self` (undefined
 * when it is being created), or throws 409 uniqueness naming the attribute another user holds. Run it
 * in the write's transaction, before the write.
 */
export async function claimUniqueValues(
  db: Kysely<DB>,
  orgId: string,
  type: ResourceTypeDef,
  attributes: ScimResource,
  self: string | undefined,
): Promise<void> {
  for (const { schema, attribute } of uniqueAttributesOf(type)) {
    const value = (attributes[schema] as Record<string, unknown> | undefined)?.[attribute.name];
    if (value === undefined || value === null) continue;
    const held = comparable(attribute, value);
    const key = `${orgId} ${schema.toLowerCase()}:${attribute.name.toLowerCase()} ${JSON.stringify(held)}`;
    await lockValue(db, key);
    if (await valueHeld(db, orgId, type.id, schema, attribute, value, self)) {
      throw new UniquenessError(
        `Another ${type.name.toLowerCase()} of the organization has this ${schema}:${attribute.name}`,
      );
    }
  }
}
