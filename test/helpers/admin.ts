// Organizations and tokens through the admin API, and SCIM requests by a token's secret: for tests of
// what an administrator does (rotation, revocation, deprovisioning, the audit log).
import type supertest from 'supertest';
import { expect } from 'vitest';
import type { Harness } from './harness.js';
import { expectScimError, type Json, SCIM_JSON } from './scim.js';

export type { Json };

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

/** The calls, bound to the file's harness (given as a getter: it exists once the file's setup ran). */
export function adminCalls(harness: () => Harness) {
  /** A SCIM request under an organization with the given token secret. */
  function scim(secret: string, orgId: string, method: Method, path: string, body?: unknown): supertest.Test {
    const req = harness().http[method](`/scim/v2/${orgId}${path}`).set('Authorization', `Bearer ${secret}`);
    return body === undefined ? req : req.set('Content-Type', SCIM_JSON).send(body as object);
  }

  async function expectRefused(secret: string, orgId: string, reason: RegExp): Promise<void> {
    const res = await scim(secret, orgId, 'get', '/Users');
    expectScimError(res, 401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer\b/);
    expect(res.body.detail).toMatch(reason);
    expect(res.text).not.toContain(secret);
  }

  async function createOrg(body: Record<string, unknown> = { name: 'Lifecycle' }): Promise<Json> {
    return (await harness().admin('post', '/orgs').send(body).expect(201)).body;
  }

  async function patchOrg(orgId: string, body: Record<string, unknown>): Promise<Json> {
    const res = await harness().admin('patch', `/orgs/${orgId}`).send(body).expect(200);
    expect(res.body).toMatchObject(body);
    return res.body;
  }

  /** A token through the admin API: its view (id, …) and its secret. */
  async function createToken(
    orgId: string,
    body: Record<string, unknown> = {},
  ): Promise<{ id: string; secret: string; view: Json }> {
    const res = await harness().admin('post', `/orgs/${orgId}/tokens`).send(body).expect(201);
    const { token: secret, ...view } = res.body;
    return { id: view.id, secret, view };
  }

  async function listTokens(orgId: string): Promise<Json[]> {
    return (await harness().admin('get', `/orgs/${orgId}/tokens`).expect(200)).body.tokens;
  }

  async function tokenView(orgId: string, id: string): Promise<Json> {
    const found = (await listTokens(orgId)).find((t) => t.id === id);
    expect(found, `token ${id}`).toBeDefined();
    return found;
  }

  const rotate = (orgId: string, tokenId: string, body?: Record<string, unknown>) => {
    const req = harness().admin('post', `/orgs/${orgId}/tokens/${tokenId}/rotate`);
    return body === undefined ? req : req.send(body);
  };
  const revoke = (orgId: string, tokenId: string, body?: Record<string, unknown>) => {
    const req = harness().admin('post', `/orgs/${orgId}/tokens/${tokenId}/revoke`);
    return body === undefined ? req : req.send(body);
  };

  /** An organization (group sync on when the body says so) with a token of both scopes. */
  async function orgWithToken(
    body: Record<string, unknown> = { name: 'Lifecycle' },
  ): Promise<{ orgId: string; token: { id: string; secret: string } }> {
    const org = await createOrg(body);
    return { orgId: org.id, token: await createToken(org.id, { name: 'IdP' }) };
  }

  return {
    scim,
    expectRefused,
    createOrg,
    patchOrg,
    createToken,
    listTokens,
    tokenView,
    rotate,
    revoke,
    orgWithToken,
  };
}
