// The parameters of a list or search (RFC 7644 §3.4.2, §3.4.3, RFC 9865 §2), read from a query
// string or from a SearchRequest body, checked once, in one shape.
import { z } from 'zod';
import { type Query, queryValue } from '../http/query.js';
import { InvalidSyntaxError, InvalidValueError } from '../http/scim-errors.js';
import { DEFAULT_COUNT, MAX_COUNT } from './list-response.js';
import { type ProjectionParams, parseAttributeList, validateProjectionParams } from './projection.js';

type Paging =
  | { readonly kind: 'index'; readonly startIndex: number; readonly count: number }
  /** `cursor` is '' for the first page (RFC 9865 §2). */
  | { readonly kind: 'cursor'; readonly cursor: string; readonly count: number };

export interface ListParams {
  readonly filter: string | undefined;
  readonly sortBy: string | undefined;
  readonly sortOrder: string | undefined;
  readonly paging: Paging;
  readonly projection: ProjectionParams;
}

function integer(name: string, raw: string | number | undefined): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw === 'number' ? !Number.isInteger(raw) : !/^\s*[+-]?\d+\s*$/.test(raw)) {
    throw new InvalidValueError(`${name} must be an integer, got ${JSON.stringify(raw)}`);
  }
  return typeof raw === 'number' ? raw : Number.parseInt(raw, 10);
}

interface RawParams {
  filter?: string | undefined;
  sortBy?: string | undefined;
  sortOrder?: string | undefined;
  startIndex?: string | number | undefined;
  count?: string | number | undefined;
  cursor?: string | undefined;
  attributes?: string[] | undefined;
  excludedAttributes?: string[] | undefined;
}

/**
 * A startIndex past every row answers an empty page; beyond this one (2^53 - 1, the largest integer a
 * JSON number holds exactly) it is read as this one, which Postgres can still take as an OFFSET.
 */
const MAX_START_INDEX = Number.MAX_SAFE_INTEGER;

function build(raw: RawParams): ListParams {
  // RFC 7644 §3.4.2.4: a negative count is 0; above the maximum it is capped (RFC 9865 maxPageSize).
  const count = Math.min(MAX_COUNT, Math.max(0, integer('count', raw.count) ?? DEFAULT_COUNT));
  const requested = integer('startIndex', raw.startIndex);
  const startIndex = requested === undefined ? undefined : Math.min(requested, MAX_START_INDEX);
  let paging: Paging;
  if (raw.cursor !== undefined) {
    if (startIndex !== undefined) throw new InvalidValueError('Use either startIndex or cursor, not both');
    paging = { kind: 'cursor', cursor: raw.cursor, count };
  } else {
    paging = { kind: 'index', startIndex: Math.max(1, startIndex ?? 1), count };
  }
  const projection = { attributes: raw.attributes, excludedAttributes: raw.excludedAttributes };
  validateProjectionParams(projection);
  return { filter: raw.filter, sortBy: raw.sortBy, sortOrder: raw.sortOrder, paging, projection };
}

/** From a GET query string. `?cursor` with no value asks for the first cursor page. */
export function listParamsFromQuery(query: Query): ListParams {
  return build({
    filter: queryValue(query, 'filter'),
    sortBy: queryValue(query, 'sortBy'),
    sortOrder: queryValue(query, 'sortOrder'),
    startIndex: queryValue(query, 'startIndex'),
    count: queryValue(query, 'count'),
    cursor: queryValue(query, 'cursor'),
    attributes: parseAttributeList(queryValue(query, 'attributes')),
    excludedAttributes: parseAttributeList(queryValue(query, 'excludedAttributes')),
  });
}

const attributeList = z
  .union([z.array(z.string()), z.string()])
  .transform((v) => (Array.isArray(v) ? parseAttributeList(v.join(',')) : parseAttributeList(v)));

const searchRequest = z.object({
  schemas: z.array(z.string()).optional(),
  filter: z.string().optional(),
  sortBy: z.string().optional(),
  sortOrder: z.string().optional(),
  startIndex: z.union([z.number(), z.string()]).optional(),
  count: z.union([z.number(), z.string()]).optional(),
  cursor: z.string().optional(),
  attributes: attributeList.optional(),
  excludedAttributes: attributeList.optional(),
});

/** From a POST /.search SearchRequest body (RFC 7644 §3.4.3). */
export function listParamsFromSearchRequest(body: unknown): ListParams {
  const parsed = searchRequest.safeParse(body ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new InvalidSyntaxError(`SearchRequest ${issue.path.join('.') || 'body'}: ${issue.message}`);
  }
  return build(parsed.data);
}
