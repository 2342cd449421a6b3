// The in-memory evaluator: the same semantics as the SQL compiler, over a rendered SCIM resource.
// A property test keeps the two in agreement; PATCH uses it to pick the elements a value path names.

import { isObject, type Json } from '../json.js';
import { compareValues } from './compare.js';
import type { AttributeTarget, ResolvedFilter, Target } from './resolve.js';

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
