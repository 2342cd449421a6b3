// An organization's own schema extensions: the RFC 7643 §7 definitions an administrator gives, checked
// and spelled out in full, and the registry they make with the standard schemas.
import { z } from 'zod';
import { attribute } from './attribute.js';
import { type Registry, resourceTypes, standardSchemas } from './registry.js';
import type { AttributeDef, ResourceTypeDef, ResourceTypeName, SchemaDef } from './types.js';

/** How many schemas an organization may have, attributes a schema, and sub-attributes an attribute. */
export const CUSTOM_SCHEMA_LIMITS = { schemas: 20, attributes: 100, subAttributes: 20 } as const;
/** The longest custom string an organization may store: values stay small enough to index. */
const CUSTOM_STRING_MAX_LENGTH = 2048;

/** ATTRNAME (RFC 7643 §2.1): a letter, then letters, digits, `-` and `_`. */
const ATTRIBUTE_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
/**
 * A URN (RFC 8141) that a filter, a PATCH path, `attributes` and a URL path can name: `urn:`, a
 * namespace of 2 to 32 letters, digits and inner hyphens, `:`, then letters, digits and
 * `-._~!$&'*+;=:@` (RFC 3986 pchar without what those break on: parentheses, commas, `/`, `%`).
 */
const URN = /^urn:[A-Za-z0-9][A-Za-z0-9-]{0,30}[A-Za-z0-9]:[A-Za-z0-9\-._~!$&'*+;=:@]{1,250}$/;
const URN_MESSAGE =
  "must be a URN (RFC 8141) a filter can name: urn:<namespace>:<name>, the name of letters, digits and -._~!$&'*+;=:@";
/** Where the standard schemas and messages live: an organization's schema may not take a URN there. */
const RESERVED_PREFIXES = ['urn:ietf:params:scim:schemas:core:', 'urn:ietf:params:scim:api:'];

const CUSTOM_TYPES = ['string', 'boolean', 'integer', 'decimal', 'dateTime', 'reference', 'complex'] as const;

const text = (max: number) => z.string().max(max, `must be at most ${max} characters`);

const characteristics = {
  name: z.string().regex(ATTRIBUTE_NAME, 'must start with a letter and hold only letters, digits, - and _'),
  type: z.enum(CUSTOM_TYPES),
  multiValued: z.boolean().default(false),
  description: text(1000).default(''),
  required: z.boolean().default(false),
  caseExact: z.boolean().default(false),
  mutability: z.enum(['readOnly', 'readWrite', 'immutable', 'writeOnly']).default('readWrite'),
  returned: z.enum(['always', 'never', 'default', 'request']).default('default'),
  uniqueness: z
    .enum(['none', 'server', 'global'])
    .default('none')
    .refine((u) => u !== 'global', 'global is not offered: use server (unique within the organization)'),
  canonicalValues: z.array(text(200)).max(100).optional(),
  referenceTypes: z.array(text(100)).min(1).max(10).optional(),
};

const subAttributeInput = z.strictObject(characteristics);
const attributeInput = z.strictObject({
  ...characteristics,
  subAttributes: z.array(subAttributeInput).max(CUSTOM_SCHEMA_LIMITS.subAttributes).optional(),
});

type AttributeInput = z.infer<typeof attributeInput>;

/** The body of PUT /admin/v1/orgs/{orgId}/schemas/{urn}: a Schema resource and what it extends. */
const schemaInput = z.strictObject({
  schemas: z.array(z.string()).optional(),
  id: z.string().regex(URN, URN_MESSAGE),
  name: text(200).optional(),
  description: text(1000).default(''),
  resourceType: z.enum(['User', 'Group']).optional(),
  attributes: z
    .array(attributeInput)
    .min(1, 'must list at least one attribute')
    .max(CUSTOM_SCHEMA_LIMITS.attributes),
  meta: z.unknown().optional(),
});

/** A definition as stored and served: every characteristic present. */
export interface CustomSchema {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly resourceType: ResourceTypeName;
  readonly attributes: readonly AttributeDef[];
}

export class InvalidSchemaError extends Error {}

/**
 * Checks a definition given for `urn` and spells it out. Throws InvalidSchemaError saying what is
 * wrong: the URN (a standard one, or one the path does not name), a name, a type, a characteristic
 * that does not fit its type, two attributes of one name.
 */
export function parseCustomSchema(urn: string, body: unknown): CustomSchema {
  const result = schemaInput.safeParse(body ?? {});
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const field = issue.path.join('.');
    throw new InvalidSchemaError(field ? `${field}: ${issue.message}` : issue.message);
  }
  const input = result.data;
  if (input.id.toLowerCase() !== urn.toLowerCase()) {
    throw new InvalidSchemaError(`id: ${input.id} is not the URN the path names (${urn})`);
  }
  if (
    RESERVED_PREFIXES.some((p) => input.id.toLowerCase().startsWith(p)) ||
    standardSchemas.some((s) => s.id.toLowerCase() === input.id.toLowerCase())
  ) {
    throw new InvalidSchemaError(
      `id: ${input.id} is a standard SCIM URN; give the extension a URN of your own`,
    );
  }
  const resourceType = input.resourceType ?? resourceTypeOf(input.id);
  if (!resourceType) {
    throw new InvalidSchemaError(
      `resourceType: say which resource the schema extends ("User" or "Group"); ${input.id} does not end in :User or :Group`,
    );
  }
  const attributes = checkedAttributes(input.attributes, 'attributes');
  return {
    id: input.id,
    name: input.name ?? input.id.slice(input.id.lastIndexOf(':') + 1),
    description: input.description,
    resourceType,
    attributes,
  };
}

function resourceTypeOf(urn: string): ResourceTypeName | undefined {
  if (/:User$/i.test(urn)) return 'User';
  if (/:Group$/i.test(urn)) return 'Group';
  return undefined;
}

function checkedAttributes(inputs: readonly AttributeInput[], where: string): AttributeDef[] {
  const seen = new Set<string>();
  return inputs.map((input, n) => {
    const at = `${where}.${n}`;
    const lower = input.name.toLowerCase();
    if (seen.has(lower)) throw new InvalidSchemaError(`${at}.name: ${input.name} is named twice`);
    seen.add(lower);
    const { subAttributes, ...rest } = input;
    if (input.type === 'complex') {
      if (!subAttributes || subAttributes.length === 0) {
        throw new InvalidSchemaError(`${at}.subAttributes: a complex attribute lists its sub-attributes`);
      }
      if (subAttributes.some((s) => s.type === 'complex')) {
        throw new InvalidSchemaError(
          `${at}.subAttributes: a sub-attribute cannot be complex (one level only)`,
        );
      }
      if (input.uniqueness !== 'none') {
        throw new InvalidSchemaError(
          `${at}.uniqueness: a complex attribute cannot be unique; its sub-attributes can`,
        );
      }
    } else if (subAttributes) {
      throw new InvalidSchemaError(`${at}.subAttributes: only a complex attribute has sub-attributes`);
    }
    if (input.canonicalValues && input.type !== 'string' && input.type !== 'reference') {
      throw new InvalidSchemaError(
        `${at}.canonicalValues: only a string or a reference has canonical values`,
      );
    }
    if (input.referenceTypes && input.type !== 'reference') {
      throw new InvalidSchemaError(`${at}.referenceTypes: only a reference has reference types`);
    }
    if (input.uniqueness === 'server' && (input.multiValued || input.type === 'boolean')) {
      throw new InvalidSchemaError(
        `${at}.uniqueness: server uniqueness needs a single-valued string, number, date or reference`,
      );
    }
    return attribute(input.name, input.type, input.description, {
      multiValued: input.multiValued,
      required: input.required,
      caseExact: input.caseExact,
      mutability: rest.mutability,
      returned: rest.returned,
      uniqueness: rest.uniqueness,
      ...(input.canonicalValues ? { canonicalValues: input.canonicalValues } : {}),
      ...(input.type === 'reference' ? { referenceTypes: input.referenceTypes ?? ['external'] } : {}),
      ...(input.type === 'string' || input.type === 'reference'
        ? { maxLength: CUSTOM_STRING_MAX_LENGTH }
        : {}),
      ...(subAttributes ? { subAttributes: checkedAttributes(subAttributes, `${at}.subAttributes`) } : {}),
    });
  });
}

/** The stored form of a definition: what /Schemas shows, with the resource type it extends. */
export function storedDefinition(schema: CustomSchema): unknown {
  return {
    id: schema.id,
    name: schema.name,
    description: schema.description,
    resourceType: schema.resourceType,
    attributes: schema.attributes.map(storedAttribute),
  };
}

function storedAttribute(attr: AttributeDef): unknown {
  const { maxLength: _maxLength, defaultValue: _defaultValue, subAttributes, ...rest } = attr;
  return { ...rest, ...(subAttributes ? { subAttributes: subAttributes.map(storedAttribute) } : {}) };
}

/** A stored definition read back (it was checked when written). */
export function customSchemaOf(definition: unknown): CustomSchema {
  const schema = definition as CustomSchema;
  return parseCustomSchema(schema.id, schema);
}

/**
 * The registry of an organization that has defined schemas of its own (even if it has removed them
 * all since): copies of the standard resource types, each with its extensions after the standard ones.
 */
export function registryWith(custom: readonly CustomSchema[]): Registry {
  const extend = (type: ResourceTypeDef): ResourceTypeDef => ({
    ...type,
    schemaExtensions: [
      ...type.schemaExtensions,
      ...custom
        .filter((s) => s.resourceType === type.id)
        .map((s) => ({ schema: s.id, required: false, definition: toSchemaDef(s) })),
    ],
  });
  const types = { User: extend(resourceTypes.User), Group: extend(resourceTypes.Group) };
  const schemas: SchemaDef[] = [...standardSchemas];
  for (const type of [types.User, types.Group])
    for (const e of type.schemaExtensions) if (!schemas.includes(e.definition)) schemas.push(e.definition);
  return { types, schemas };
}

function toSchemaDef(schema: CustomSchema): SchemaDef {
  return { id: schema.id, name: schema.name, description: schema.description, attributes: schema.attributes };
}
