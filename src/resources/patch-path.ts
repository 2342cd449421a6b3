// What a PATCH path names (RFC 7644 §3.5.2: `PATH = attrPath / valuePath [subAttr]`), resolved
// through the schema registry: an extension as a whole, or an attribute, its sub-attribute and the
// value filter that picks its elements.
import type { Filter } from '../filter/ast.js';
import { parsePatchPath } from '../filter/parse.js';
import { type ResolvedFilter, resolveElementFilter } from '../filter/resolve.js';
import { InvalidPathError } from '../http/scim-errors.js';
import { findAttribute, resolveAttributePath, unresolvedMessage } from '../schema/registry.js';
import type { AttributeDef, ResourceTypeDef } from '../schema/types.js';

/** What a path names (RFC 7644 §3.5.2, `PATH = attrPath / valuePath [subAttr]`). */
export type AttributeTarget = Extract<Target, { kind: 'attribute' }>;
export type FilteredTarget = AttributeTarget & { readonly filter: NonNullable<AttributeTarget['filter']> };

export type Target =
  | { readonly kind: 'extension'; readonly schema: string }
  | {
      readonly kind: 'attribute';
      /** URN of the extension holding it; undefined for core attributes. */
      readonly extension: string | undefined;
      readonly attribute: AttributeDef;
      /** `name.givenName`, or the sub-attribute after a value filter: `emails[…].value`. */
      readonly sub?: AttributeDef;
      readonly filter?: { readonly resolved: ResolvedFilter; readonly ast: Filter };
    };

export function resolvePath(type: ResourceTypeDef, text: string): Target {
  // The extension URN alone names the whole extension object.
  const asSchema = type.schemaExtensions.find((e) => e.schema.toLowerCase() === text.toLowerCase());
  if (asSchema) return { kind: 'extension', schema: asSchema.schema };
  const parsed = parsePatchPath(text);
  const attrText = text.includes('[') ? text.slice(0, text.indexOf('[')) : text;
  // A bare `manager` (Entra's older tutorial) resolves through the registry like any path.
  const resolved = resolveAttributePath(type, attrText);
  if (resolved?.kind === 'ambiguous')
    throw new InvalidPathError(unresolvedMessage(resolved, attrText, type), 'ambiguous_attribute');
  if (resolved?.kind !== 'attribute')
    throw new InvalidPathError(`${text} names no attribute of ${type.name}`, 'unknown_attribute');
  const extension = resolved.schema && resolved.schema.id !== type.schema ? resolved.schema.id : undefined;
  if (!parsed.filter) {
    return {
      kind: 'attribute',
      extension,
      attribute: resolved.attribute,
      ...(resolved.subAttribute ? { sub: resolved.subAttribute } : {}),
    };
  }
  const attr = resolved.attribute;
  if (!attr.multiValued || attr.type !== 'complex') {
    throw new InvalidPathError(`${text}: a value filter needs a multi-valued complex attribute`);
  }
  let sub: AttributeDef | undefined;
  if (parsed.sub) {
    sub = findAttribute(attr.subAttributes ?? [], parsed.sub);
    if (!sub) throw new InvalidPathError(`${text}: ${parsed.sub} is not a sub-attribute of ${attr.name}`);
  }
  let resolvedFilter: ResolvedFilter;
  try {
    resolvedFilter = resolveElementFilter(parsed.filter, type, attr);
  } catch (error) {
    throw new InvalidPathError(`${text}: ${(error as Error).message}`);
  }
  return {
    kind: 'attribute',
    extension,
    attribute: attr,
    ...(sub ? { sub } : {}),
    filter: { resolved: resolvedFilter, ast: parsed.filter },
  };
}
