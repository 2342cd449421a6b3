// RFC 7644 §3.4.2.5 and RFC 7643 §2.2 `returned`: which attributes a response carries.

import { type Query, queryValue } from '../http/query.js';
import { InvalidValueError } from '../http/scim-errors.js';
import {
  commonAttributes,
  coreSchemaOf,
  derivedOnce,
  extensionSchemasOf,
  resolveAttributePath,
  resourceTypes,
} from '../schema/registry.js';
import type { AttributeDef, ResourceTypeDef } from '../schema/types.js';
import type { ScimResource } from './validate.js';

export interface ProjectionParams {
  attributes?: readonly string[] | undefined;
  excludedAttributes?: readonly string[] | undefined;
}

/**
 * A parsed projection: for each schema (keyed by URN, '' for core and common attributes) the set of
 * named attributes, each either whole (`true`) or narrowed to some sub-attributes.
 */
type Selection = Map<string, Map<string, true | Set<string>>>;

interface Projection {
  readonly mode: 'attributes' | 'excluded' | 'default';
  readonly selection: Selection;
  /** Extension schemas named whole in the list. */
  readonly wholeSchemas: Set<string>;
}

/** Splits a comma-separated attribute list; a value filter after a name (`emails[type eq "work"]`) is dropped. */
export function parseAttributeList(raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  const names = raw
    .split(',')
    .map((s) => s.replace(/\[.*$/, '').trim())
    .filter((s) => s.length > 0);
  return names.length > 0 ? names : undefined;
}

/** The projection of a request that names no attributes (nearly every one), per type. */
const defaultProjection = derivedOnce((type: ResourceTypeDef) => buildProjection(type, {}));

function projectionOf(type: ResourceTypeDef, params: ProjectionParams): Projection {
  return params.attributes === undefined && params.excludedAttributes === undefined
    ? defaultProjection(type)
    : buildProjection(type, params);
}

function buildProjection(type: ResourceTypeDef, params: ProjectionParams): Projection {
  const list = params.attributes ?? params.excludedAttributes;
  const mode = params.attributes ? 'attributes' : params.excludedAttributes ? 'excluded' : 'default';
  const selection: Selection = new Map();
  const wholeSchemas = new Set<string>();
  for (const path of list ?? []) {
    const resolved = resolveAttributePath(type, path);
    // Unknown names select nothing; RFC 7644 does not make them an error, and IdPs send a few.
    if (!resolved || resolved.kind === 'ambiguous') continue;
    if (resolved.kind === 'extension') {
      wholeSchemas.add(resolved.schema.id);
      continue;
    }
    const key = resolved.schema && resolved.schema.id !== type.schema ? resolved.schema.id : '';
    const attrs = selection.get(key) ?? new Map<string, true | Set<string>>();
    selection.set(key, attrs);
    const current = attrs.get(resolved.attribute.name);
    if (!resolved.subAttribute) attrs.set(resolved.attribute.name, true);
    else if (current !== true) {
      const subs = current ?? new Set<string>();
      subs.add(resolved.subAttribute.name);
      attrs.set(resolved.attribute.name, subs);
    }
  }
  return { mode, selection, wholeSchemas };
}

export function validateProjectionParams(params: ProjectionParams): void {
  if (params.attributes && params.excludedAttributes) {
    throw new InvalidValueError('attributes and excludedAttributes cannot be used together');
  }
}

/** Copies into `out` the attributes of `value` (described by `attrs`) that the projection keeps. */
function projectInto(
  out: Record<string, unknown>,
  value: Record<string, unknown>,
  attrs: readonly AttributeDef[],
  projection: Projection,
  selected: Map<string, true | Set<string>> | undefined,
  whole: boolean,
): Record<string, unknown> {
  for (const attr of attrs) {
    const v = value[attr.name];
    if (v === undefined) continue;
    const pick = selected?.get(attr.name);
    const keep = keepAttribute(attr, projection.mode, whole, pick);
    if (keep === false) continue;
    out[attr.name] = keep === true ? v : narrow(v, attr, keep, projection.mode);
  }
  return out;
}

/** true keeps the whole attribute, a Set keeps (or drops, when excluding) those sub-attributes. */
function keepAttribute(
  attr: AttributeDef,
  mode: Projection['mode'],
  whole: boolean,
  pick: true | Set<string> | undefined,
): boolean | Set<string> {
  if (attr.returned === 'never') return false;
  if (attr.returned === 'always') return true;
  if (mode === 'attributes') {
    if (whole) return attr.returned !== 'request' || pick !== undefined;
    return pick ?? false;
  }
  if (attr.returned === 'request') return false;
  if (mode === 'excluded') return pick === true ? false : (pick ?? true);
  return true;
}

function narrow(value: unknown, attr: AttributeDef, subs: Set<string>, mode: Projection['mode']): unknown {
  const subAttrs = attr.subAttributes ?? [];
  const one = (item: unknown) => {
    if (typeof item !== 'object' || item === null) return item;
    const out: Record<string, unknown> = {};
    for (const sub of subAttrs) {
      const v = (item as Record<string, unknown>)[sub.name];
      if (v === undefined || sub.returned === 'never') continue;
      const named = subs.has(sub.name);
      if (sub.returned === 'always' || (mode === 'attributes' ? named : !named)) out[sub.name] = v;
    }
    return out;
  };
  return Array.isArray(value) ? value.map(one) : one(value);
}

interface Layout {
  /** id, then the core schema's attributes. */
  readonly core: readonly AttributeDef[];
  readonly extensions: ReturnType<typeof extensionSchemasOf>;
  readonly meta: readonly AttributeDef[];
}

/** The order a resource is written in, per type, worked out once. */
const layoutOf = derivedOnce((type: ResourceTypeDef): Layout => {
  const [id, meta] = commonAttributes;
  return {
    core: [id!, ...coreSchemaOf(type).attributes],
    extensions: extensionSchemasOf(type),
    meta: [meta!],
  };
});

/**
 * Applies attributes/excludedAttributes and the `returned` characteristics to rendered resources:
 * the parameters are read once, and the function serves every resource of a response.
 */
export function projector(
  type: ResourceTypeDef,
  params: ProjectionParams = {},
): (resource: ScimResource) => ScimResource {
  const projection = projectionOf(type, params);
  const { core, extensions, meta } = layoutOf(type);
  const common = projection.selection.get('');
  return (resource) => {
    // Output order: schemas, id, core attributes, extensions, meta.
    const out: ScimResource = { schemas: resource.schemas };
    projectInto(out, resource, core, projection, common, false);
    for (const schema of extensions) {
      const value = resource[schema.id];
      if (typeof value !== 'object' || value === null) continue;
      const whole = projection.wholeSchemas.has(schema.id);
      if (projection.mode === 'excluded' && whole) continue;
      const projected = projectInto(
        {},
        value as Record<string, unknown>,
        schema.attributes,
        projection,
        projection.selection.get(schema.id),
        whole,
      );
      if (Object.keys(projected).length > 0) out[schema.id] = projected;
    }
    projectInto(out, resource, meta, projection, common, false);
    return out;
  };
}

/**
 * Whether a response with these parameters carries every stored attribute of a resource of this
 * type as stored: no attributes/excludedAttributes, and nothing that can be stored is returned only
 * on request or never (writeOnly attributes, such as password, are never stored).
 */
export function returnsStoredWhole(type: ResourceTypeDef, params: ProjectionParams = {}): boolean {
  return params.attributes === undefined && params.excludedAttributes === undefined && storedIsReturned(type);
}

const storedIsReturned = derivedOnce((type: ResourceTypeDef) => {
  // An organization that has defined schemas of its own may store values of one it removed since,
  // which only the registry's layout leaves out.
  if (!Object.values(resourceTypes).includes(type)) return false;
  const returned = (attr: AttributeDef): boolean =>
    attr.mutability === 'writeOnly' ||
    ((attr.returned === 'default' || attr.returned === 'always') &&
      (attr.subAttributes ?? []).every(returned));
  const { core, extensions, meta } = layoutOf(type);
  return [...core, ...meta, ...extensions.flatMap((schema) => schema.attributes)].every(returned);
});

/** Applies attributes/excludedAttributes and the `returned` characteristics to a rendered resource. */
export function projectAttributes(
  resource: ScimResource,
  type: ResourceTypeDef,
  params: ProjectionParams = {},
): ScimResource {
  return projector(type, params)(resource);
}

/**
 * Whether a response would carry a core attribute at all: lets services skip reading what the
 * projection drops (a group's members under `excludedAttributes=members`).
 */
export function isReturned(type: ResourceTypeDef, params: ProjectionParams, name: string): boolean {
  const attr = coreSchemaOf(type).attributes.find((a) => a.name === name);
  if (!attr) return false;
  const projection = projectionOf(type, params);
  return keepAttribute(attr, projection.mode, false, projection.selection.get('')?.get(name)) !== false;
}

/** `attributes` / `excludedAttributes` of a request's query string. */
export function projectionFromQuery(query: Query): ProjectionParams {
  const params = {
    attributes: parseAttributeList(queryValue(query, 'attributes')),
    excludedAttributes: parseAttributeList(queryValue(query, 'excludedAttributes')),
  };
  validateProjectionParams(params);
  return params;
}
