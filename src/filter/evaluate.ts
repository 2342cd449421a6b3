// The in-memory evaluator: the same semantics as the SQL compiler, over a rendered SCIM resource.
// A property test keeps the two in agreement; PATCH uses it to pick the elements a value path names.

import { isObject, type Json } from '../json.js';
import type { CompareOp } from './ast.js';
import type { AttributeTarget, Comparable, ResolvedFilter, Target } from './resolve.js';

/** Code point order, as Postgres's "C" collation compares. */
function compareText(a: string, b: string): number {
  if (a === b) return 0;
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/**
 * `left op right` for a present value. Strings fold case unless caseExact (ASCII and beyond, as
 * JavaScript folds; the database folds as its collation does, which agrees on ASCII).
 */
export function compareValues(left: unknown, op: CompareOp, right: Comparable, caseExact: boolean): boolean {
  if (left === undefined || left === null) return false;
  if (right instanceof Date) {
    const time = typeof left === 'string' ? Date.parse(left) : Number.NaN;
    if (Number.isNaN(time)) return false;
    return ordered(time - right.getTime(), op);
  }
  if (typeof right === 'boolean') {
    if (typeof left !== 'boolean') return false;
    if (op === 'eq') return left === right;
    if (op === 'ne') return left !== right;
    return false;
  }
  if (typeof right === 'number') {
    if (typeof left !== 'number') return false;
    return ordered(left - right, op);
  }
  if (typeof left !== 'string') return false;
  const a = caseExact ? left : left.toLowerCase();
  const b = caseExact ? right : right.toLowerCase();
  switch (op) {
    case 'co':
      return a.includes(b);
    case 'sw':
      return a.startsWith(b);
    case 'ew':
      return a.endsWith(b);
    default:
      return ordered(compareText(a, b), op);
  }
}

function ordered(difference: number, op: CompareOp): boolean {
  switch (op) {
    case 'eq':
      return difference === 0;
    case 'ne':
      return difference !== 0;
    case 'gt':
      return difference > 0;
    case 'ge':
      return difference >= 0;
    case 'lt':
      return difference < 0;
    case 'le':
      return difference <= 0;
    default:
      return false;
  }
}

function isPresent(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (isObject(value)) return Object.keys(value).length > 0;
  return true;
}

function attributeValue(
  resource: Json,
  target: AttributeTarget | { schema: string | undefined; extension: boolean; attribute: { name: string } },
): unknown {
  const holder = target.extension ? resource[target.schema!] : resource;
  if (!isObject(holder)) return undefined;
  const value = holder[target.attribute.name];
  if ('sub' in target && target.sub) return isObject(value) ? value[target.sub.name] : undefined;
  return value;
}

function targetValue(target: Target, resource: Json, element: Json | undefined): unknown {
  if (target.kind === 'element') return element?.[target.sub.name];
  return attributeValue(resource, target);
}

/** Whether a rendered resource (or, inside a value path, one element of it) matches the filter. */
export function matchesFilter(filter: ResolvedFilter, resource: Json, element?: Json): boolean {
  switch (filter.kind) {
    case 'and':
      return filter.filters.every((f) => matchesFilter(f, resource, element));
    case 'or':
      return filter.filters.some((f) => matchesFilter(f, resource, element));
    case 'not':
      return !matchesFilter(filter.filter, resource, element);
    case 'compare': {
      const caseExact =
        filter.target.kind === 'element'
          ? filter.target.sub.caseExact
          : (filter.target.sub ?? filter.target.attribute).caseExact;
      return compareValues(targetValue(filter.target, resource, element), filter.op, filter.value, caseExact);
    }
    case 'present':
      if (filter.target.kind === 'multiValued') return isPresent(attributeValue(resource, filter.target));
      return isPresent(targetValue(filter.target, resource, element));
    case 'valuePath': {
      const items = attributeValue(resource, filter.target);
      return (
        Array.isArray(items) &&
        items.some((item) => isObject(item) && matchesFilter(filter.filter, resource, item))
      );
    }
    case 'constant':
      return filter.value;
    case 'extension':
      return isObject(resource[filter.schema]);
  }
}
