// The /Roles and /Entitlements resources (draft-ietf-scim-roles-entitlements): a catalogue entry as a
// SCIM resource, and a page of them filtered, sorted and projected in memory. An organization's
// catalogue is bounded by what the admin API takes, so it is read whole and never scanned in SQL.
import type { Filter, PathText } from '../filter/ast.js';
import { type Comparable, compareValues } from '../filter/compare.js';
import { parseFilter } from '../filter/parse.js';
import { InvalidCursorError, InvalidFilterError, InvalidValueError } from '../http/scim-errors.js';
import type { ListParams } from '../resources/list-params.js';
import { listResponse } from '../resources/list-response.js';
import type { ScimResource } from '../resources/validate.js';
import { findAttribute } from '../schema/registry.js';
import type { CatalogueResourceType } from '../schema/roles-entitlements.js';
import type { AttributeDef } from '../schema/types.js';
import type { CatalogueEntry } from './catalogue.repository.js';

/**
 * A catalogue entry as the draft's resource: its id is the entry's, kept while its value stays (in
 * any case); `value` is what a User's roles or entitlements carry.
 */
function renderEntry(type: CatalogueResourceType, entry: CatalogueEntry, baseUrl: string): ScimResource {
  return {
    schemas: [type.schema],
    id: entry.id,
    value: entry.value,
    display: entry.displayName,
    supported: true,
    ...(entry.description ? { description: entry.description } : {}),
    meta: {
      resourceType: type.id,
      location: `${baseUrl}${type.endpoint}/${entry.id}`,
    },
  };
}

/** `id` is the common attribute every resource has; the rest are the schema's. */
const ID: AttributeDef = {
  name: 'id',
  type: 'string',
  multiValued: false,
  description: 'Unique identifier of the entry, assigned by the service provider.',
  required: true,
  caseExact: true,
  mutability: 'readOnly',
  returned: 'always',
  uniqueness: 'server',
};

function attributeOf(type: CatalogueResourceType, path: PathText): AttributeDef | undefined {
  if (path.uri !== undefined && path.uri.toLowerCase() !== type.schema.toLowerCase()) return undefined;
  if (path.sub !== undefined) return undefined;
  return path.name.toLowerCase() === 'id' ? ID : findAttribute(type.definition.attributes, path.name);
}

type Matcher = (resource: ScimResource) => boolean;

/** RFC 7644 §3.4.2.2 over the catalogue's attributes; any other path is an invalid filter. */
function matcherOf(type: CatalogueResourceType, filter: Filter): Matcher {
  switch (filter.kind) {
    case 'and': {
      const all = filter.filters.map((f) => matcherOf(type, f));
      return (r) => all.every((m) => m(r));
    }
    case 'or': {
      const any = filter.filters.map((f) => matcherOf(type, f));
      return (r) => any.some((m) => m(r));
    }
    case 'not': {
      const inner = matcherOf(type, filter.filter);
      return (r) => !inner(r);
    }
    case 'valuePath':
      throw new InvalidFilterError(`${filter.path.text} is not a multi-valued attribute of ${type.name}`);
    case 'present': {
      const attr = known(type, filter.path);
      return (r) => r[attr.name] !== undefined && r[attr.name] !== '';
    }
    case 'compare': {
      const attr = known(type, filter.path);
      const { value, op } = filter;
      if (value === null && (op === 'eq' || op === 'ne'))
        return (r) => (op === 'ne') === (r[attr.name] !== undefined);
      // Every attribute is a string, which takes every operator, or the boolean `supported`: eq, ne.
      const fits =
        attr.type === 'boolean'
          ? typeof value === 'boolean' && (op === 'eq' || op === 'ne')
          : typeof value === 'string';
      if (!fits) {
        throw new InvalidFilterError(
          `${filter.path.text} ${op} ${JSON.stringify(value)}: ${attr.name} is a ${attr.type}`,
        );
      }
      return (r) => compareValues(r[attr.name], op, value as Comparable, attr.caseExact);
    }
  }
}

function known(type: CatalogueResourceType, path: PathText): AttributeDef {
  const attr = attributeOf(type, path);
  if (!attr)
    throw new InvalidFilterError(`${path.text} is not an attribute of ${type.name}`, 'unknown_attribute');
  return attr;
}

function comparatorOf(type: CatalogueResourceType, params: ListParams) {
  const order = params.sortOrder?.toLowerCase();
  if (order !== undefined && order !== '' && order !== 'ascending' && order !== 'descending') {
    throw new InvalidValueError(`sortOrder must be "ascending" or "descending", not "${params.sortOrder}"`);
  }
  const by = params.sortBy ? parseSortPath(type, params.sortBy) : undefined;
  const sign = order === 'descending' ? -1 : 1;
  const text = (r: ScimResource, name: string) => String(r[name] ?? '');
  // Ties, and no sortBy, keep value order: the same on every page.
  return (a: ScimResource, b: ScimResource) =>
    sign * (by ? compareText(text(a, by), text(b, by)) : 0) ||
    compareText(text(a, 'value'), text(b, 'value'));
}

function parseSortPath(type: CatalogueResourceType, sortBy: string): string {
  const colon = sortBy.lastIndexOf(':');
  const path: PathText =
    colon > 0
      ? { uri: sortBy.slice(0, colon), name: sortBy.slice(colon + 1), text: sortBy }
      : { name: sortBy, text: sortBy };
  const attr = attributeOf(type, path);
  if (!attr)
    throw new InvalidValueError(`sortBy: ${sortBy} is not an attribute of ${type.name}`, 'unknown_attribute');
  return attr.name;
}

const codeUnitOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
/** Text in any case first, as the catalogue keeps values unique; exact order breaks what ties. */
const compareText = (a: string, b: string) =>
  codeUnitOrder(a.toLowerCase(), b.toLowerCase()) || codeUnitOrder(a, b);

/** RFC 7644 §3.4.2.5: `attributes` keeps those named (and id, schemas); `excludedAttributes` drops them. */
function projectorOf(type: CatalogueResourceType, params: ListParams) {
  const names = (list: readonly string[] | undefined) =>
    new Set(
      (list ?? [])
        .map((text) => attributeOf(type, { name: text.slice(text.lastIndexOf(':') + 1), text })?.name)
        .filter((n): n is string => n !== undefined),
    );
  const { attributes, excludedAttributes } = params.projection;
  if (attributes) {
    const keep = names(attributes);
    return (r: ScimResource) =>
      Object.fromEntries(Object.entries(r).filter(([k]) => k === 'schemas' || k === 'id' || keep.has(k)));
  }
  if (excludedAttributes) {
    const drop = names(excludedAttributes);
    drop.delete('id');
    return (r: ScimResource) => Object.fromEntries(Object.entries(r).filter(([k]) => !drop.has(k)));
  }
  return (r: ScimResource) => r;
}

/** A resource of the catalogue by its id, or undefined. */
export function findEntry(
  type: CatalogueResourceType,
  entries: readonly CatalogueEntry[],
  id: string,
  baseUrl: string,
): ScimResource | undefined {
  const entry = entries.find((e) => e.id === id.toLowerCase());
  return entry && renderEntry(type, entry, baseUrl);
}

/**
 * A ListResponse of the entries the request's filter selects, in its order, one page of them. A
 * cursor (RFC 9865) is the position of the page's first entry: the catalogue has no other order.
 */
export function listEntries(
  type: CatalogueResourceType,
  entries: readonly CatalogueEntry[],
  params: ListParams,
  baseUrl: string,
): ScimResource {
  const matches = params.filter ? matcherOf(type, parseFilter(params.filter)) : () => true;
  const selected = entries
    .map((e) => renderEntry(type, e, baseUrl))
    .filter(matches)
    .sort(comparatorOf(type, params));
  const project = projectorOf(type, params);
  const { paging } = params;
  if (paging.kind === 'index') {
    const page = selected.slice(paging.startIndex - 1, paging.startIndex - 1 + paging.count);
    return listResponse(page.map(project), selected.length, paging.startIndex);
  }
  if (paging.cursor !== '' && !/^\d{1,9}$/.test(paging.cursor)) {
    throw new InvalidCursorError(`${JSON.stringify(paging.cursor)} is not a cursor of ${type.endpoint}`);
  }
  const start = paging.cursor === '' ? 0 : Number(paging.cursor);
  const page = selected.slice(start, start + paging.count);
  const { startIndex: _none, ...response } = listResponse(page.map(project), selected.length, 1);
  const next = start + page.length;
  return {
    ...response,
    ...(next < selected.length && page.length > 0 ? { nextCursor: String(next) } : {}),
    ...(start > 0 ? { previousCursor: String(Math.max(0, start - paging.count)) } : {}),
  };
}
