import { InvalidValueError } from '../http/scim-errors.js';
import type { ScimResource } from './validate.js';

export const LIST_RESPONSE_URN = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';

/** Page size when a client sends no `count`, and the most one page returns (ServiceProviderConfig maxResults). */
export const DEFAULT_COUNT = 100;
export const MAX_COUNT = 1000;

export interface IndexPage {
  /** 1-based, as in RFC 7644 §3.4.2.4. */
  readonly startIndex: number;
  readonly count: number;
}

function integerParam(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  if (!/^[+-]?\d+$/.test(raw.trim())) throw new InvalidValueError(`${name} must be an integer, got "${raw}"`);
  return Number.parseInt(raw, 10);
}

/** RFC 7644 §3.4.2.4: startIndex below 1 is 1, a negative count is 0, and count is capped. */
export function parseIndexPage(query: { startIndex?: string; count?: string }): IndexPage {
  const startIndex = Math.max(1, integerParam('startIndex', query.startIndex) ?? 1);
  const count = Math.min(MAX_COUNT, Math.max(0, integerParam('count', query.count) ?? DEFAULT_COUNT));
  return { startIndex, count };
}

export function listResponse(
  resources: readonly ScimResource[],
  totalResults: number,
  startIndex: number,
): ScimResource {
  return {
    schemas: [LIST_RESPONSE_URN],
    totalResults,
    startIndex,
    itemsPerPage: resources.length,
    // Always present, even when empty: Okta and the Microsoft collection read `Resources` literally.
    Resources: resources,
  };
}
