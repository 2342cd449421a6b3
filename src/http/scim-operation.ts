// What a SCIM request was, in the few words sync health and metrics count it by: its operation
// (`users.create`, `groups.list`, `discovery.read`) and its outcome. Both come from a bounded set, so
// they can be metric labels.
import { isUuid } from '../db/ids.js';

/** How a request ended, as sync health tells a working IdP from a failing one. */
export type Outcome = 'success' | 'not_found' | 'unauthorized' | 'client_error' | 'server_error';

export function outcomeOf(status: number): Outcome {
  if (status < 400) return 'success';
  if (status === 404) return 'not_found';
  if (status === 401) return 'unauthorized';
  return status < 500 ? 'client_error' : 'server_error';
}

const RESOURCES: Readonly<Record<string, string>> = {
  users: 'users',
  groups: 'groups',
  serviceproviderconfig: 'discovery',
  schemas: 'discovery',
  resourcetypes: 'discovery',
};

/** The operation of `method` on `path`, the path after the organization's base URL. */
export function scimOperationOf(method: string, path: string): string {
  const [first = '', second] = path.split('/').filter(Boolean);
  const lower = first.toLowerCase();
  if (lower === '.search' && method === 'POST') return 'all.search';
  const resource = RESOURCES[lower];
  if (!resource) return 'other';
  if (resource === 'discovery') return method === 'GET' ? 'discovery.read' : 'other';
  if (second?.toLowerCase() === '.search') return method === 'POST' ? `${resource}.search` : 'other';
  const verb = second === undefined ? COLLECTION_VERBS[method] : RESOURCE_VERBS[method];
  return verb ? `${resource}.${verb}` : 'other';
}

const COLLECTION_VERBS: Readonly<Record<string, string>> = { GET: 'list', POST: 'create' };
const RESOURCE_VERBS: Readonly<Record<string, string>> = {
  GET: 'get',
  PUT: 'replace',
  PATCH: 'patch',
  DELETE: 'delete',
};

/** Words of the protocol (filters, PatchOp, SearchRequest: RFC 7644 §3.4.2.2, §3.4.3, §3.5.2). */
const GRAMMAR: ReadonlySet<string> = new Set([
  ...[
    'eq',
    'ne',
    'co',
    'sw',
    'ew',
    'gt',
    'ge',
    'lt',
    'le',
    'pr',
    'and',
    'or',
    'not',
    'true',
    'false',
    'null',
  ],
  ...['schemas', 'operations', 'op', 'path', 'value', 'add', 'replace', 'remove'],
  ...['filter', 'sortby', 'sortorder', 'ascending', 'descending', 'startindex', 'count', 'cursor'],
  ...['attributes', 'excludedattributes'],
]);
/** The URNs of the standards, which no client's value is. */
const STANDARD_URN = /^urn:ietf:params:scim:/i;
/** Where a filter, a path or a list of names breaks into words. */
const SEPARATORS = /[\s()[\]"',]+/;
/** The texts of one request looked at, at most: a body of thousands of members need not all be. */
const MAX_TEXTS = 5_000;
const DETAIL_MAX_LENGTH = 500;

/** What a client sent that a detail may quote: the path, the query, the body's keys and strings. */
export interface RequestTexts {
  readonly path: string;
  readonly query: Readonly<Record<string, unknown>>;
  readonly body: unknown;
  /** The names of the organization's registry (schema/registry.ts namesOf), lower-cased. */
  readonly names: ReadonlySet<string>;
}

/**
 * A detail scimd answered, as the failed-request log keeps it: without any value the client sent,
 * quoted or not (a filter's value, a path that is an address, an attribute's value). Quoted text
 * goes; then every word of the request that is not a name of the registry, a word of the filter
 * grammar or a uuid goes wherever the detail repeats it.
 */
export function redactedDetail(detail: string, request?: RequestTexts): string {
  let kept = detail.replace(/"(?:[^"\\]|\\.)*"/g, '"…"');
  if (request) {
    const lower = kept.toLowerCase();
    const values = new Set<string>();
    for (const text of requestTexts(request)) {
      for (const word of [text.trim(), ...text.split(SEPARATORS)]) {
        const key = word.toLowerCase();
        if (!word || GRAMMAR.has(key) || request.names.has(key) || STANDARD_URN.test(word) || isUuid(word))
          continue;
        if (lower.includes(key)) values.add(word);
      }
    }
    // Longest first, so that a whole path goes before the words in it.
    for (const value of [...values].sort((a, b) => b.length - a.length)) kept = withoutWord(kept, value);
  }
  return kept.slice(0, DETAIL_MAX_LENGTH);
}

/** `text` with each whole-word occurrence of `word` (any case) replaced by `…`. */
function withoutWord(text: string, word: string): string {
  const escaped = word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return text.replace(new RegExp(`(?<![\\w@%+~-])${escaped}(?![\\w@%+~-])`, 'gi'), '…');
}

function* requestTexts({ path, query, body }: RequestTexts): Iterable<string> {
  yield* path.split('/').filter(Boolean).map(safeDecode);
  let budget = MAX_TEXTS;
  const stack: unknown[] = [query, body];
  while (stack.length > 0 && budget > 0) {
    const value = stack.pop();
    if (typeof value === 'string') {
      budget--;
      yield value;
    } else if (Array.isArray(value)) {
      stack.push(...value.slice(0, budget));
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, inner] of Object.entries(value)) {
        budget--;
        yield key;
        stack.push(inner);
      }
    }
  }
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
