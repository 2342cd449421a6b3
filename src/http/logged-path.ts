// What a log keeps of a SCIM path: the endpoint and a resource id, never anything else a client put
// in the path (an address where an id should be is personal data).
import { isUuid } from '../db/ids.js';

/** The endpoints under a SCIM base URL (RFC 7644 §3.2), lower-cased. */
const ENDPOINTS: ReadonlySet<string> = new Set([
  'users',
  'groups',
  'me',
  'bulk',
  '.search',
  'serviceproviderconfig',
  'resourcetypes',
  'schemas',
]);

/**
 * The path after an organization's base URL as a log keeps it: the endpoint, when it is one, and the
 * next segment when it is a uuid or `.search`; anything else becomes `…`. Never a query string.
 */
export function loggedPath(path: string): string {
  const [first, second, ...rest] = path.split('/').filter(Boolean);
  if (first === undefined) return '/';
  const endpoint = ENDPOINTS.has(first.toLowerCase()) ? first : '…';
  if (second === undefined) return `/${endpoint}`;
  const id = isUuid(second) || second.toLowerCase() === '.search' ? second : '…';
  return `/${endpoint}/${id}${rest.length > 0 ? '/…' : ''}`;
}
