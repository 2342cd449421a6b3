// The SCIM vocabulary the tests share: schema and message URNs, a PATCH body, and the shape of an error.
import type supertest from 'supertest';
import { expect } from 'vitest';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are JSON
export type Json = any;

export const SCIM_JSON = 'application/scim+json';

export const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Schema';
export const RESOURCE_TYPE = 'urn:ietf:params:scim:schemas:core:2.0:ResourceType';
export const SPC = 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig';
export const LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const SEARCH = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';
export const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const SCIM_ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';

/** A PatchOp request body with these operations. */
export const patchOp = (...Operations: unknown[]) => ({ schemas: [PATCH_OP], Operations });

/** `filter=<filter>`, encoded for a query string. */
export const filterQuery = (filter: string) => `filter=${encodeURIComponent(filter)}`;

/** An RFC 7644 §3.12 error: status, content type, schema, scimType when given, and a detail. */
export function expectScimError(res: supertest.Response, status: number, scimType?: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.headers['content-type']).toBe(SCIM_JSON);
  expect(res.body).toMatchObject({ schemas: [SCIM_ERROR], status: String(status) });
  if (scimType) expect(res.body.scimType).toBe(scimType);
  expect(typeof res.body.detail).toBe('string');
  expect(res.body.detail.length).toBeGreaterThan(0);
}

/** An admin API error: status, JSON, and `{error: {code, message, requestId}}` with the response's request id. */
export function expectAdminError(res: supertest.Response, status: number, code: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.body).toEqual({
    error: { code, message: expect.any(String), requestId: res.headers['x-request-id'] },
  });
  expect(res.body.error.message.length).toBeGreaterThan(0);
}
