// resolve: ties every attribute path of a parsed filter to the schema registry, checks that each
// operator fits the attribute's type, and normalises the tree so that the compiler and the evaluator
// see only two kinds of targets: an attribute of the resource, or a sub-attribute of the element a
// value path is looking at. A comparison on a multi-valued attribute (`emails.value co "x"`,
// `emails co "x"`) becomes a value path (`emails[value co "x"]`): it matches when any element does.
import { isStorableText } from '../db/text.js';
import { type FailureReason, InvalidFilterError } from '../http/scim-errors.js';
import { findAttribute, resolveAttributePath, unresolvedMessage } from '../schema/registry.js';
import type { AttributeDef, AttributeType, ResourceTypeDef } from '../schema/types.js';
import type { CompareOp, Filter, FilterValue, PathText } from './ast.js';
import { type Comparable, compareValues } from './compare.js';

/** A singular attribute of the resource, possibly a sub-attribute of a singular complex one. */
export interface AttributeTarget {
  readonly kind: 'attribute';
  /** URN of the attribute's schema; undefined for the common attributes id and meta. */
  readonly schema: string | undefined;
  /** True when the attribute lives in an extension (stored under the extension's URN). */
  readonly extension: boolean;
  readonly attribute: AttributeDef;
  readonly sub?: AttributeDef;
}

/** A sub-attribute of the element selected by the enclosing value path. */
interface ElementTarget {
  readonly kind: 'element';
  readonly sub: AttributeDef;
}

export type Target = AttributeTarget | ElementTarget;

/** A multi-valued complex attribute whose elements a value path tests. */
export interface MultiValuedTarget {
  readonly schema: string | undefined;
  readonly extension: boolean;
  readonly attribute: AttributeDef;
}

export type ResolvedFilter =
  | {
      readonly kind: 'compare';
      readonly target: Target;
      readonly op: CompareOp;
      readonly value: Comparable;
      /** The type the comparison is made in (the target's type). */
      readonly type: AttributeType;
    }
  | { readonly kind: 'present'; readonly target: Target | MultiValuedTargetRef }
  | { readonly kind: 'and' | 'or'; readonly filters: readonly ResolvedFilter[] }
  | { readonly kind: 'not'; readonly filter: ResolvedFilter }
  | { readonly kind: 'valuePath'; readonly target: MultiValuedTarget; readonly filter: ResolvedFilter }
  /** Known from the filter alone (`schemas pr`, `schemas eq "<the core schema>"`). */
  | { readonly kind: 'constant'; readonly value: boolean }
  /** The resource carries the extension (`schemas eq "urn:…:enterprise:2.0:User"`). */
  | { readonly kind: 'extension'; readonly schema: string };

/** `emails pr`: presence of a whole multi-valued attribute. */
interface MultiValuedTargetRef extends MultiValuedTarget {
  readonly kind: 'multiValued';
}

const ORDERED_TYPES: ReadonlySet<AttributeType> = new Set([
  'string',
  'reference',
  'integer',
  'decimal',
  'dateTime',
]);
const SUBSTRING_TYPES: ReadonlySet<AttributeType> = new Set(['string', 'reference']);
const EQUALITY_TYPES: ReadonlySet<AttributeType> = new Set([
  'string',
  'reference',
  'integer',
  'decimal',
  'dateTime',
  'boolean',
  'binary',
]);

function invalid(message: string, reason?: FailureReason): never {
  throw new InvalidFilterError(message, reason);
}

/** RFC 7643 §2.3.5: xsd:dateTime; offsets and any number of fraction digits are accepted. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

function coerceValue(
  value: FilterValue,
  attr: AttributeDef,
  op: CompareOp,
  path: string,
  bare?: string,
): Comparable {
  const type = attr.type;
  if (value === null)
    return invalid(`${path} ${op} null is not a valid comparison; use "pr" or "not (… pr)"`);
  switch (type) {
    case 'boolean':
      if (typeof value === 'boolean') return value;
      // A quoted "true"/"false" is read as the boolean, as it is in request bodies.
      if (typeof value === 'string' && ['true', 'false'].includes(value.toLowerCase())) {
        return value.toLowerCase() === 'true';
      }
      return invalid(`${path} is a boolean; compare it with true or false, not ${JSON.stringify(value)}`);
    case 'integer':
    case 'decimal':
      if (typeof value === 'number' && (type === 'decimal' || Number.isInteger(value))) return value;
      return invalid(
        `${path} is ${type === 'integer' ? 'an integer' : 'a number'}; ${JSON.stringify(value)} is not`,
      );
    case 'dateTime': {
      const text = String(value);
      // A dateTime without a zone is read as UTC, whatever the server's local time zone.
      const date = new Date(/(Z|[+-]\d{2}:?\d{2})$/i.test(text) ? text : `${text}Z`);
      if (!DATE_TIME.test(text) || Number.isNaN(date.getTime())) {
        return invalid(
          `${path} is a dateTime; ${JSON.stringify(value)} is not one (e.g. "2026-01-31T12:00:00Z")`,
        );
      }
      return date;
    }
    case 'string':
    case 'reference':
    case 'binary':
      // A bare number in string position (`employeeNumber eq 7781`) is the string it spells.
      if (typeof value === 'string' && !isStorableText(value)) {
        return invalid(`The value compared with ${path} contains a NUL character or an unpaired surrogate`);
      }
      if (typeof value === 'number') return bare ?? String(value);
      if (typeof value === 'string') return value;
      return invalid(`${path} is a string; compare it with a quoted value, not ${JSON.stringify(value)}`);
    case 'complex':
      return invalid(`${path} is complex; compare one of its sub-attributes`);
  }
}

function checkOperator(type: AttributeType, op: CompareOp, path: string): void {
  const allowed =
    op === 'eq' || op === 'ne'
      ? EQUALITY_TYPES.has(type)
      : op === 'co' || op === 'sw' || op === 'ew'
        ? SUBSTRING_TYPES.has(type)
        : ORDERED_TYPES.has(type);
  if (!allowed) invalid(`The operator "${op}" does not apply to ${path}, which is of type ${type}`);
}

function compare(
  target: Target,
  def: AttributeDef,
  filter: { op: CompareOp; value: FilterValue; bare?: string },
  path: string,
): ResolvedFilter {
  checkOperator(def.type, filter.op, path);
  const value = coerceValue(filter.value, def, filter.op, path, filter.bare);
  return { kind: 'compare', target, op: filter.op, value, type: def.type };
}

/** The default sub-attribute of a complex attribute compared as a whole (RFC 7644 §3.4.2.2). */
function defaultSub(attr: AttributeDef, path: string): AttributeDef {
  const value = attr.subAttributes && findAttribute(attr.subAttributes, 'value');
  return value ?? invalid(`${path} is complex; name the sub-attribute to compare, e.g. ${path}.<name>`);
}

/** The attribute alone: a value path's target never carries the sub-attribute it was reached by. */
function multiValued(found: {
  schema: string | undefined;
  extension: boolean;
  attribute: AttributeDef;
}): MultiValuedTarget {
  return { schema: found.schema, extension: found.extension, attribute: found.attribute };
}

class Resolver {
  constructor(private readonly type: ResourceTypeDef) {}

  private lookup(path: PathText) {
    const resolved = resolveAttributePath(this.type, path.text);
    if (resolved?.kind !== 'attribute') {
      const why = resolved?.kind === 'ambiguous' ? 'ambiguous_attribute' : 'unknown_attribute';
      return invalid(unresolvedMessage(resolved, path.text, this.type), why);
    }
    if (resolved.attribute.returned === 'never' || resolved.subAttribute?.returned === 'never') {
      return invalid(`${path.text} cannot be used in a filter`, 'unknown_attribute');
    }
    const schema = resolved.schema?.id;
    return {
      schema,
      extension: schema !== undefined && schema !== this.type.schema,
      attribute: resolved.attribute,
      sub: resolved.subAttribute,
    };
  }

  resolve(filter: Filter): ResolvedFilter {
    switch (filter.kind) {
      case 'and':
      case 'or':
        return { kind: filter.kind, filters: filter.filters.map((f) => this.resolve(f)) };
      case 'not':
        return { kind: 'not', filter: this.resolve(filter.filter) };
      case 'valuePath': {
        const found = this.lookup(filter.path);
        if (!found.attribute.multiValued || found.attribute.type !== 'complex' || found.sub) {
          invalid(`${filter.path.text}[…] needs a multi-valued complex attribute`);
        }
        return {
          kind: 'valuePath',
          target: multiValued(found),
          filter: this.resolveElement(filter.filter, found.attribute),
        };
      }
      case 'present':
      case 'compare': {
        if (!filter.path.uri && !filter.path.sub && filter.path.name.toLowerCase() === 'schemas') {
          return this.schemas(filter);
        }
        const found = this.lookup(filter.path);
        const path = filter.path.text;
        if (found.attribute.multiValued) {
          // `emails pr` asks whether there is any element at all.
          if (filter.kind === 'present' && !found.sub)
            return { kind: 'present', target: { kind: 'multiValued', ...multiValued(found) } };
          const sub = found.sub ?? defaultSub(found.attribute, path);
          const element: ElementTarget = { kind: 'element', sub };
          const inner: ResolvedFilter =
            filter.kind === 'present'
              ? { kind: 'present', target: element }
              : compare(element, sub, filter, path);
          return { kind: 'valuePath', target: multiValued(found), filter: inner };
        }
        let target: AttributeTarget = { kind: 'attribute', ...found };
        let def = found.sub ?? found.attribute;
        if (def.type === 'complex' && filter.kind === 'compare') {
          // `manager eq "id"` compares manager.value.
          def = defaultSub(def, path);
          target = { ...target, sub: def };
        }
        if (filter.kind === 'present') return { kind: 'present', target };
        return compare(target, def, filter, path);
      }
    }
  }

  /**
   * `schemas` (RFC 7643 §3) lists the core schema of every resource and the extensions it carries: a
   * comparison is decided here for each URN the type knows (RFC 7644 §3.4.2.2 gives
   * `schemas eq "urn:…:enterprise:2.0:User"` as an example). URNs compare case-insensitively.
   */
  private schemas(filter: Extract<Filter, { kind: 'compare' | 'present' }>): ResolvedFilter {
    if (filter.kind === 'present') return { kind: 'constant', value: true };
    if (typeof filter.value !== 'string') {
      return invalid(`schemas holds URNs; compare it with a quoted URN, not ${JSON.stringify(filter.value)}`);
    }
    const value = filter.value;
    const matches = (urn: string) => compareValues(urn, filter.op, value, false);
    if (matches(this.type.schema)) return { kind: 'constant', value: true };
    const extensions: ResolvedFilter[] = this.type.schemaExtensions
      .filter((e) => matches(e.schema))
      .map((e) => ({ kind: 'extension', schema: e.schema }));
    if (extensions.length === 0) return { kind: 'constant', value: false };
    return extensions.length === 1 ? extensions[0]! : { kind: 'or', filters: extensions };
  }

  /** Resolves the filter inside `attr[…]`: its paths name sub-attributes of one element. */
  resolveElement(filter: Filter, attr: AttributeDef): ResolvedFilter {
    switch (filter.kind) {
      case 'and':
      case 'or':
        return { kind: filter.kind, filters: filter.filters.map((f) => this.resolveElement(f, attr)) };
      case 'not':
        return { kind: 'not', filter: this.resolveElement(filter.filter, attr) };
      case 'valuePath':
        return invalid(`value filters cannot nest (${filter.path.text}[…] inside ${attr.name}[…])`);
      case 'present':
      case 'compare': {
        const path = filter.path;
        const sub =
          !path.uri && !path.sub && attr.subAttributes
            ? findAttribute(attr.subAttributes, path.name)
            : undefined;
        if (!sub) return invalid(`${path.text} is not a sub-attribute of ${attr.name}`);
        const target: ElementTarget = { kind: 'element', sub };
        if (filter.kind === 'present') return { kind: 'present', target };
        return compare(target, sub, filter, `${attr.name}.${sub.name}`);
      }
    }
  }
}

export function resolveFilter(filter: Filter, type: ResourceTypeDef): ResolvedFilter {
  return new Resolver(type).resolve(filter);
}

/** Resolves the filter of a value path (`emails[type eq "work"]`) against the attribute's sub-attributes. */
export function resolveElementFilter(
  filter: Filter,
  type: ResourceTypeDef,
  attr: AttributeDef,
): ResolvedFilter {
  return new Resolver(type).resolveElement(filter, attr);
}

/** The attributes of the resource a filter tests (a value path's own sub-attributes aside). */
export function referencedAttributes(
  filter: ResolvedFilter,
  into = new Set<AttributeDef>(),
): Set<AttributeDef> {
  switch (filter.kind) {
    case 'and':
    case 'or':
      for (const f of filter.filters) referencedAttributes(f, into);
      break;
    case 'not':
      referencedAttributes(filter.filter, into);
      break;
    case 'valuePath':
      into.add(filter.target.attribute);
      break;
    case 'compare':
    case 'present':
      if (filter.target.kind !== 'element') into.add(filter.target.attribute);
      break;
  }
  return into;
}
