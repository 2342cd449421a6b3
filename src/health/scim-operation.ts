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

/**
 * The path as a failed request's log keeps it: the resource type, and the resource's id when the
 * path names one (or `.search`); never a query string (filters carry values), nor anything else a
 * client put in the path.
 */
export function loggedPath(path: string): string {
  const [first, second] = path.split('/').filter(Boolean);
  if (first === undefined) return '/';
  const resource = first.length > 40 ? '…' : first;
  if (second === undefined) return `/${resource}`;
  return `/${resource}/${isUuid(second) || second.toLowerCase() === '.search' ? second : '…'}`;
}

/** A detail scimd answered, without the values it quotes (a filter's or a path's strings). */
export function redactedDetail(detail: string): string {
  return detail.replace(/"(?:[^"\\]|\\.)*"/g, '"…"').slice(0, 500);
}
