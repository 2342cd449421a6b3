// Request and response validation, generated from the schema registry with zod. One builder makes a
// validator per (resource type, context); the IdP leniencies that apply to whole bodies live here,
// each named where it applies.
import { z } from 'zod';
import { isStorableText, UNSTORABLE_TEXT_MESSAGE } from '../db/text.js';
import { InvalidSyntaxError, InvalidValueError } from '../http/scim-errors.js';
import { isObject } from '../json.js';
import {
  coreSchemaOf,
  derivedOncePerName,
  extensionSchemasOf,
  findAttribute,
  topLevelAttributes,
} from '../schema/registry.js';
import type { AttributeDef, ResourceTypeDef, SchemaDef } from '../schema/types.js';

/**
 * create and replace: what a client may write (readOnly attributes are ignored, required ones enforced).
 * response: what scimd returns (readOnly allowed, writeOnly and returned:never absent).
 */
/** `merge`: a PATCH's values alone (patch.ts mergePatchOf), so a required attribute may be absent. */
export type ValidationContext = 'create' | 'replace' | 'merge' | 'response';

export type ScimResource = Record<string, unknown>;

const STRING_BOOLEANS: Readonly<Record<string, boolean>> = { true: true, false: false };

/** Entra's default mapping sends booleans as "True"/"False"; the validator sends "true". */
function coerceBoolean(value: unknown): unknown {
  if (typeof value === 'string') {
    const b = STRING_BOOLEANS[value.toLowerCase()];
    if (b !== undefined) return b;
  }
  return value;
}

const text = z.string().refine(isStorableText, UNSTORABLE_TEXT_MESSAGE);

/** Text of at most the attribute's maxLength characters (the registry's bound on stored values). */
function boundedText(attr: AttributeDef): z.ZodType<string> {
  if (attr.maxLength === undefined) return text;
  return z
    .string()
    .max(attr.maxLength, `must be at most ${attr.maxLength} characters`)
    .refine(isStorableText, UNSTORABLE_TEXT_MESSAGE);
}

const dateTime = z.string().refine((v) => /^\d{4}-\d{2}-\d{2}T/.test(v) && !Number.isNaN(Date.parse(v)), {
  message: 'expected an xsd:dateTime such as 2026-01-31T12:00:00Z',
});

function includedIn(context: ValidationContext, attr: AttributeDef): boolean {
  if (context === 'response') return attr.mutability !== 'writeOnly' && attr.returned !== 'never';
  // RFC 7643 §2.2: readOnly values sent by a client are ignored (Okta sends `groups`, `id`, `meta`).
  return attr.mutability !== 'readOnly';
}

function valueSchema(attr: AttributeDef, context: ValidationContext): z.ZodType {
  switch (attr.type) {
    case 'string':
    case 'reference':
      return boundedText(attr);
    case 'binary':
      return attr.maxLength === undefined
        ? z.base64()
        : z.base64().max(attr.maxLength, `must be at most ${attr.maxLength} characters`);
    case 'boolean':
      return z.preprocess(coerceBoolean, z.boolean());
    case 'integer':
      return z.number().int();
    case 'decimal':
      return z.number();
    case 'dateTime':
      return dateTime;
    case 'complex':
      return complexSchema(attr, context);
  }
}

function complexSchema(attr: AttributeDef, context: ValidationContext): z.ZodType {
  const subs = (attr.subAttributes ?? []).filter((s) => includedIn(context, s));
  const shape = objectShape(subs, context);
  const hasValue = subs.some((s) => s.name === 'value');
  return z.preprocess((raw) => {
    // Entra sends a reference such as `manager` as a bare id; treat it as {value}.
    if (hasValue && (typeof raw === 'string' || typeof raw === 'number')) raw = { value: String(raw) };
    return isObject(raw) ? canonicalKeys(raw, subs) : raw;
  }, z.object(shape));
}

function attributeSchema(attr: AttributeDef, context: ValidationContext): z.ZodType {
  const item = valueSchema(attr, context);
  const required = attr.required && context !== 'merge';
  const base = attr.multiValued
    ? z.preprocess((raw) => (raw === undefined || Array.isArray(raw) ? raw : [raw]), z.array(item))
    : attr.required && attr.type === 'string'
      ? boundedText(attr).pipe(z.string().min(1, 'must not be empty'))
      : item;
  const schema = z.preprocess(
    (raw) => {
      if (raw === null) return undefined; // RFC 7643 §2.5: null is the same as unassigned.
      // Older Entra and SDK shapes wrap a single value in a one-element array.
      if (!attr.multiValued && Array.isArray(raw) && raw.length <= 1) return raw[0] ?? undefined;
      if (attr.multiValued && Array.isArray(raw) && raw.length === 0) return undefined;
      // `""` or `{"value": ""}` for a complex reference means "no value" (Entra's manager removal).
      if (
        attr.type === 'complex' &&
        !attr.multiValued &&
        (raw === '' || (isObject(raw) && raw.value === ''))
      ) {
        return undefined;
      }
      return raw;
    },
    required ? base : base.optional(),
  );
  // An optional attribute the body does not carry stops here: without the outer optional, zod would
  // run the preprocessing above for every attribute of the schema on every body.
  return required ? schema : schema.optional();
}

function objectShape(attrs: readonly AttributeDef[], context: ValidationContext): Record<string, z.ZodType> {
  return Object.fromEntries(attrs.map((a) => [a.name, attributeSchema(a, context)]));
}

/** Maps keys case-insensitively to the attribute names of the registry and drops unknown keys. */
function canonicalKeys(
  raw: Record<string, unknown>,
  attrs: readonly AttributeDef[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    const attr = findAttribute(attrs, key);
    if (attr && out[attr.name] === undefined) out[attr.name] = value;
  }
  return out;
}

/**
 * Gathers a resource body into canonical form: core attributes at the top level (also when sent
 * nested under, or prefixed with, the core schema URN), each extension under its URN (also when its
 * attributes are sent as `urn:…:attr` keys), every name spelled as in the registry, unknown keys
 * dropped (RFC 7644 §3.3 lets a server ignore them; the Microsoft collection expects that).
 */
function gather(raw: Record<string, unknown>, type: ResourceTypeDef): Record<string, unknown> {
  const core = coreSchemaOf(type);
  const extensions = extensionSchemasOf(type);
  const top = topLevelAttributes(type);
  const out: Record<string, unknown> = {};
  const ext = new Map<SchemaDef, Record<string, unknown>>();

  const put = (
    attrs: readonly AttributeDef[],
    target: Record<string, unknown>,
    key: string,
    value: unknown,
  ) => {
    const attr = findAttribute(attrs, key);
    if (attr && target[attr.name] === undefined) target[attr.name] = value;
  };
  const extTarget = (schema: SchemaDef) => {
    const target = ext.get(schema) ?? {};
    ext.set(schema, target);
    return target;
  };

  for (const [key, value] of Object.entries(raw)) {
    const lower = key.toLowerCase();
    if (lower === 'schemas') {
      out.schemas = value;
      continue;
    }
    if (!lower.startsWith('urn:')) {
      put(top, out, key, value);
      continue;
    }
    const coreId = core.id.toLowerCase();
    if (lower === coreId) {
      if (isObject(value)) for (const [k, v] of Object.entries(value)) put(top, out, k, v);
      continue;
    }
    if (lower.startsWith(`${coreId}:`)) {
      put(top, out, key.slice(coreId.length + 1), value);
      continue;
    }
    for (const schema of extensions) {
      const id = schema.id.toLowerCase();
      if (lower === id && isObject(value)) {
        for (const [k, v] of Object.entries(value)) put(schema.attributes, extTarget(schema), k, v);
      } else if (lower.startsWith(`${id}:`)) {
        put(schema.attributes, extTarget(schema), key.slice(id.length + 1), value);
      }
    }
  }
  for (const [schema, value] of ext) out[schema.id] = value;
  return out;
}

interface Validator {
  parse(body: unknown): ScimResource;
}

function buildValidator(type: ResourceTypeDef, context: ValidationContext): Validator {
  const attrs = topLevelAttributes(type).filter((a) => includedIn(context, a));
  const shape: Record<string, z.ZodType> = objectShape(attrs, context);
  shape.schemas = z.array(z.string()).optional();
  for (const schema of extensionSchemasOf(type)) {
    const extAttrs = schema.attributes.filter((a) => includedIn(context, a));
    shape[schema.id] = z.preprocess(
      (raw) => (raw === null ? undefined : raw),
      z.object(objectShape(extAttrs, context)).optional(),
    );
  }
  const schema = z.object(shape);
  return {
    parse(body: unknown): ScimResource {
      if (!isObject(body)) throw new InvalidSyntaxError('The request body must be a JSON object');
      const result = schema.safeParse(gather(body, type));
      if (!result.success) throw new InvalidValueError(describeIssues(result.error), 'attribute_value');
      return prune(result.data) as ScimResource;
    },
  };
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => {
      const path = issue.path
        .map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i > 0 ? '.' : ''}${String(p)}`))
        .join('');
      const missing = issue.code === 'invalid_type' && issue.message.endsWith('received undefined');
      return `Attribute ${path || '(body)'} ${missing ? 'is required' : `is invalid: ${issue.message}`}`;
    })
    .join('; ');
}

/** Drops unassigned values (undefined, empty objects, empty arrays) so stored resources stay minimal. */
function prune(value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = value.map(prune).filter((v) => v !== undefined);
    return items.length > 0 ? items : undefined;
  }
  if (isObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const pruned = prune(v);
      if (pruned !== undefined) out[k] = pruned;
    }
    return Object.keys(out).length > 0 ? out : undefined;
  }
  return value;
}

/** One validator per resource type (each organization's own, when it has schemas) and context. */
const validators = derivedOncePerName<ResourceTypeDef, Validator>();

/** Validates and canonicalises a resource body for a resource type and context. */
export function validateResource(
  type: ResourceTypeDef,
  context: ValidationContext,
  body: unknown,
): ScimResource {
  return validators(type, context, () => buildValidator(type, context)).parse(body);
}
