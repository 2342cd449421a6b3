import type { ScimResource } from './validate.js';

const LIST_RESPONSE_URN = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';

/** Page size when a client sends no `count`, and the most one page returns (ServiceProviderConfig maxResults). */
export const DEFAULT_COUNT = 100;
export const MAX_COUNT = 1000;

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

/**
 * A ListResponse as JSON text, from its fields other than `Resources` and its resources as JSON
 * texts: the resources are joined in, not parsed and serialized again.
 */
export function listResponseJson(fields: Record<string, unknown>, resources: readonly string[]): string {
  const head = JSON.stringify({ schemas: [LIST_RESPONSE_URN], ...fields });
  return `${head.slice(0, -1)},"Resources":[${resources.join(',')}]}`;
}
