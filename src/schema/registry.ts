// The schema registry: the one place that knows which schemas and attributes exist. Validation,
// projection, discovery, filters and PATCH all resolve attribute names through it.
import { attribute, complex } from './attribute.js';
import { coreGroupSchema, GROUP_SCHEMA_URN } from './core-group.js';
import { coreUserSchema, USER_SCHEMA_URN } from './core-user.js';
import { ENTERPRISE_USER_SCHEMA_URN, enterpriseUserSchema } from './enterprise-user.js';
import type { AttributeDef, ResourceTypeDef, ResourceTypeName, SchemaDef } from './types.js';

export { ENTERPRISE_USER_SCHEMA_URN };

/** RFC 7643 §3.1: attributes every resource has, outside any schema's attribute list. */
export const commonAttributes: readonly AttributeDef[] = [
  attribute('id', 'string', 'Unique identifier of the resource, assigned by the service provider.', {
    caseExact: true,
    mutability: 'readOnly',
    returned: 'always',
    uniqueness: 'server',
  }),
  complex(
    'meta',
    'Resource metadata.',
    [
      attribute('resourceType', 'string', 'The name of the resource type.', {
        caseExact: true,
        mutability: 'readOnly',
      }),
      attribute('created', 'dateTime', 'When the resource was added.', { mutability: 'readOnly' }),
      attribute('lastModified', 'dateTime', 'When the resource was last changed.', {
        mutability: 'readOnly',
      }),
      attribute('location', 'reference', 'The URI of the resource.', {
        caseExact: true,
        mutability: 'readOnly',
        referenceTypes: ['uri'],
      }),
      attribute('version', 'string', 'The version of the resource.', {
        caseExact: true,
        mutability: 'readOnly',
      }),
    ],
    { mutability: 'readOnly' },
  ),
];

/** The schemas every organization has. */
export const standardSchemas: readonly SchemaDef[] = [coreUserSchema, enterpriseUserSchema, coreGroupSchema];

/** The resource types of an organization without schemas of its own. */
export const resourceTypes: Readonly<Record<ResourceTypeName, ResourceTypeDef>> = {
  User: {
    id: 'User',
    name: 'User',
    endpoint: '/Users',
    description: 'User Account',
    schema: USER_SCHEMA_URN,
    schemaExtensions: [
      { schema: ENTERPRISE_USER_SCHEMA_URN, required: false, definition: enterpriseUserSchema },
    ],
  },
  Group: {
    id: 'Group',
    name: 'Group',
    endpoint: '/Groups',
    description: 'Group',
    schema: GROUP_SCHEMA_URN,
    schemaExtensions: [],
  },
};

/**
 * What one organization's requests resolve names against: its resource types (the standard ones, or
 * copies extended with its own schemas) and every schema it has, in the order /Schemas lists them.
 */
export interface Registry {
  readonly types: Readonly<Record<ResourceTypeName, ResourceTypeDef>>;
  readonly schemas: readonly SchemaDef[];
}

export const standardRegistry: Registry = { types: resourceTypes, schemas: standardSchemas };

const schemasByLowerId = derivedOnce(
  (registry: Registry) => new Map(registry.schemas.map((s) => [s.id.toLowerCase(), s])),
);

/** A schema of the registry by its URN, case-insensitively. */
export function findSchema(registry: Registry, urn: string): SchemaDef | undefined {
  return schemasByLowerId(registry).get(urn.toLowerCase());
}

/**
 * Every name the registry gives, lower-cased: schema URNs, resource types and their endpoints,
 * attributes and sub-attributes, bare and qualified (`emails.value`, `urn:…:costCenter`). What a
 * request names from here is no value of the client's.
 */
export const namesOf = derivedOnce((registry: Registry): ReadonlySet<string> => {
  const names = new Set<string>();
  const add = (prefix: string, attributes: readonly AttributeDef[]) => {
    for (const attr of attributes) {
      for (const name of [attr.name, `${prefix}${attr.name}`]) names.add(name.toLowerCase());
      for (const sub of attr.subAttributes ?? []) {
        names.add(sub.name.toLowerCase());
        names.add(`${attr.name}.${sub.name}`.toLowerCase());
        names.add(`${prefix}${attr.name}.${sub.name}`.toLowerCase());
      }
    }
  };
  add('', commonAttributes);
  for (const type of Object.values(registry.types)) {
    names.add(type.id.toLowerCase());
    names.add(type.endpoint.slice(1).toLowerCase());
  }
  for (const schema of registry.schemas) {
    names.add(schema.id.toLowerCase());
    add(`${schema.id}:`, schema.attributes);
  }
  return names;
});

/** A resource type of the registry by its id, case-insensitively. */
export function findResourceType(registry: Registry, id: string): ResourceTypeDef | undefined {
  return Object.values(registry.types).find((t) => t.id.toLowerCase() === id.toLowerCase());
}

/**
 * A value worked out once per registry object (a resource type, a list of attributes) and kept while
 * the object lives: the registry never changes, and requests ask for these on every body, path and
 * projection. Other objects that never change (a table's storage mapping) use it too.
 */
export function derivedOnce<K extends object, V>(derive: (key: K) => V): (key: K) => V {
  const cache = new WeakMap<K, V>();
  return (key) => {
    let value = cache.get(key);
    if (value === undefined) {
      value = derive(key);
      cache.set(key, value);
    }
    return value;
  };
}

/**
 * The same for values that also depend on a name: each (object, name) pair is worked out once, by
 * the `derive` of its first call. A `derive` that throws keeps nothing, and throws again next time.
 */
export function derivedOncePerName<K extends object, V>(): (key: K, name: string, derive: () => V) => V {
  const byName = derivedOnce((_: K) => new Map<string, V>());
  return (key, name, derive) => {
    const cache = byName(key);
    let value = cache.get(name);
    if (value === undefined) {
      value = derive();
      cache.set(name, value);
    }
    return value;
  };
}

const schemasOf = derivedOnce((type: ResourceTypeDef) => ({
  // Every core schema is a standard one; an organization adds extensions only.
  core: findSchema(standardRegistry, type.schema)!,
  extensions: type.schemaExtensions.map((e) => e.definition),
}));

export function coreSchemaOf(type: ResourceTypeDef): SchemaDef {
  return schemasOf(type).core;
}

export function extensionSchemasOf(type: ResourceTypeDef): readonly SchemaDef[] {
  return schemasOf(type).extensions;
}

/** A list of attributes by lower-cased name; of two names that differ only in case, the first. */
const byLowerName = derivedOnce((attributes: readonly AttributeDef[]) => {
  const named = new Map<string, AttributeDef>();
  for (const a of attributes) {
    const lower = a.name.toLowerCase();
    if (!named.has(lower)) named.set(lower, a);
  }
  return named as ReadonlyMap<string, AttributeDef>;
});

/** Attribute names are case-insensitive (RFC 7643 §2.1). */
export function findAttribute(attributes: readonly AttributeDef[], name: string): AttributeDef | undefined {
  // An empty list is often a fresh `?? []`: nothing to find, and nothing worth indexing.
  if (attributes.length === 0) return undefined;
  return byLowerName(attributes).get(name.toLowerCase());
}

/** The attributes addressable without a URN: the core schema's and the common ones. */
export const topLevelAttributes: (type: ResourceTypeDef) => readonly AttributeDef[] = derivedOnce(
  (type: ResourceTypeDef) => [...commonAttributes, ...coreSchemaOf(type).attributes],
);

export type ResolvedPath =
  /** The path names a whole extension schema, e.g. the enterprise URN itself. */
  | { readonly kind: 'extension'; readonly schema: SchemaDef }
  /** A bare name that more than one extension of the type defines: only its URN says which. */
  | { readonly kind: 'ambiguous'; readonly path: string; readonly schemas: readonly string[] }
  | {
      readonly kind: 'attribute';
      /** The schema the attribute belongs to; undefined for the common attributes id and meta. */
      readonly schema: SchemaDef | undefined;
      readonly attribute: AttributeDef;
      readonly subAttribute?: AttributeDef;
    };

/** Why a path did not resolve to an attribute, in a sentence that starts with the path. */
export function unresolvedMessage(
  resolved: ResolvedPath | undefined,
  path: string,
  type: ResourceTypeDef,
): string {
  if (resolved?.kind === 'ambiguous') {
    const choices = resolved.schemas.map((urn) => `${urn}:${path}`).join(' or ');
    return `${path} is ambiguous: more than one schema of ${type.name} defines it; name it with its URN (${choices})`;
  }
  return `${path} is not an attribute of ${type.name}`;
}

/**
 * Resolves `attr`, `attr.sub`, `urn:…:attr` and `urn:…:attr.sub` (RFC 7644 §3.10) against a resource
 * type, case-insensitively. Returns undefined when the path names nothing in the registry.
 */
export function resolveAttributePath(type: ResourceTypeDef, path: string): ResolvedPath | undefined {
  let schema: SchemaDef | undefined;
  let rest = path;
  if (path.toLowerCase().startsWith('urn:')) {
    const lower = path.toLowerCase();
    const candidates = [coreSchemaOf(type), ...extensionSchemasOf(type)];
    schema = candidates.find(
      (s) => lower === s.id.toLowerCase() || lower.startsWith(`${s.id.toLowerCase()}:`),
    );
    if (!schema) return undefined;
    if (lower === schema.id.toLowerCase()) {
      return schema.id === type.schema ? undefined : { kind: 'extension', schema };
    }
    rest = path.slice(schema.id.length + 1);
  }
  const [name, subName, ...tooDeep] = rest.split('.');
  if (!name || tooDeep.length > 0) return undefined;
  if (!schema && !findAttribute(topLevelAttributes(type), name)) {
    // An extension attribute named without its URN (Entra sends a bare `manager`) resolves when
    // exactly one extension of the type has it.
    const owners = extensionSchemasOf(type).filter((s) => findAttribute(s.attributes, name));
    if (owners.length === 1) return resolveAttributePath(type, `${owners[0]!.id}:${path}`);
    if (owners.length > 1) return { kind: 'ambiguous', path, schemas: owners.map((s) => s.id) };
  }
  const isCore = !schema || schema.id === type.schema;
  const attributes = isCore ? topLevelAttributes(type) : schema!.attributes;
  const attr = findAttribute(attributes, name);
  if (!attr) return undefined;
  const owner = isCore ? (commonAttributes.includes(attr) ? undefined : coreSchemaOf(type)) : schema;
  if (subName === undefined) return { kind: 'attribute', schema: owner, attribute: attr };
  const sub = attr.subAttributes ? findAttribute(attr.subAttributes, subName) : undefined;
  if (!sub) return undefined;
  return { kind: 'attribute', schema: owner, attribute: attr, subAttribute: sub };
}
