// The values of PATCH operations in the shape of their attribute: what IdPs send, made canonical.
import type { Filter } from '../filter/ast.js';
import { isObject, type Json } from '../json.js';
import { findAttribute } from '../schema/registry.js';
import type { AttributeDef } from '../schema/types.js';

/** What shapeValue returns for a value that unassigns its attribute. */
export const REMOVE = Symbol('remove');

/** Maps an object's keys to the sub-attribute names, case-insensitively; unknown keys are dropped. */
export function canonicalObject(value: Json, subs: readonly AttributeDef[]): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) {
    const sub = findAttribute(subs, k);
    // Booleans settle now, so "true" and true are the same element when adding without duplicates.
    if (sub)
      out[sub.name] = sub.type === 'boolean' && typeof v === 'string' && isBooleanText(v) ? isTrue(v) : v;
  }
  return out;
}

function isBooleanText(value: string): boolean {
  return value.toLowerCase() === 'true' || value.toLowerCase() === 'false';
}

/**
 * Entra's AppRoleAssignmentsComplex mapping, without the aadOptscim062020 flag, sends each role a PATCH
 * adds as `{"value": "{\"id\":…,\"value\":\"Admin\",\"displayName\":\"Admin\"}"}`: the app role
 * as JSON text. Its value becomes the element's: only the value, so that a later removal by value list
 * in the same form matches the element however it was added.
 */
function unwrapAppRole(element: Json): Json {
  const text = element.value;
  if (typeof text !== 'string' || !text.startsWith('{')) return element;
  let role: unknown;
  try {
    role = JSON.parse(text);
  } catch {
    return element;
  }
  if (!isObject(role) || typeof role.value !== 'string') return element;
  return { ...element, value: role.value };
}

/**
 * The value an operation sets, in the attribute's shape. IdP shapes handled here:
 * - Entra sends a reference such as `manager` as a bare id, `{value}` or a one-element array, and
 *   `""`, `{"value": ""}` or null to remove it;
 * - older Entra and SDK shapes wrap single values in a one-element array (`[{"value": "X"}]`);
 * - the Microsoft collection adds a member as a bare string id;
 * - Entra adds app roles as JSON text (unwrapAppRole).
 */
export function shapeValue(attr: AttributeDef, value: unknown): unknown | typeof REMOVE {
  if (value === null || value === undefined) return REMOVE;
  const subs = attr.subAttributes ?? [];
  const hasValueSub = subs.some((s) => s.name === 'value');
  const element = (v: unknown): unknown => {
    if (attr.type !== 'complex') return v;
    if (isObject(v)) {
      const canonical = canonicalObject(v, subs);
      return attr.name === 'roles' ? unwrapAppRole(canonical) : canonical;
    }
    return hasValueSub && (typeof v === 'string' || typeof v === 'number') ? { value: v } : v;
  };
  if (attr.multiValued) return (Array.isArray(value) ? value : [value]).map(element);
  let single = Array.isArray(value) && value.length === 1 ? value[0] : value;
  if (attr.type !== 'complex' && isObject(single) && Object.keys(single).length === 1 && 'value' in single) {
    single = single.value;
  }
  if (attr.type === 'complex') {
    if (single === '' || (isObject(single) && Object.keys(single).length === 1 && single.value === ''))
      return REMOVE;
    return element(single);
  }
  return single;
}

/** The equality comparisons of a conjunction, as the attributes of an element to create. */
export function elementFromFilter(filter: Filter): Json | undefined {
  if (filter.kind === 'compare' && filter.op === 'eq' && !filter.path.uri && !filter.path.sub) {
    return { [filter.path.name]: filter.value };
  }
  if (filter.kind === 'and') {
    const out: Json = {};
    for (const f of filter.filters) {
      const part = elementFromFilter(f);
      if (!part) return undefined;
      Object.assign(out, part);
    }
    return out;
  }
  return undefined;
}

function isTrue(value: unknown): boolean {
  return value === true || (typeof value === 'string' && value.toLowerCase() === 'true');
}

/** RFC 7643 §2.4: one primary element at most; a newly primary element clears the others. */
export function keepOnePrimary(items: Json[], fresh: readonly Json[]): void {
  const winner = fresh.find((e) => isTrue(e.primary));
  if (!winner) return;
  for (const item of items) if (item !== winner && isTrue(item.primary)) delete item.primary;
}
