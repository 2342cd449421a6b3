// Groups for the Groups tests: tenants with group sync on, users and groups created through SCIM, and
// a group's members read back.
import { type Kysely, sql } from 'kysely';
import type supertest from 'supertest';
import { expect } from 'vitest';
import type { DB } from '../../src/db/tables.js';
import { ADMIN_TOKEN, type Harness, type Tenant } from './harness.js';
import { GROUP, type Json, SCIM_JSON, USER } from './scim.js';

/** The audit entry of a group PATCH, for tests that call the member repository directly. */
export const patchEntry = (orgId: string, groupId: string, requestId: string) =>
  ({
    orgId,
    actor: 'test',
    action: 'group.patch',
    resourceType: 'Group',
    resourceId: groupId,
    status: 204,
    requestId,
  }) as const;

let seq = 0;
/** A name no other test of the file uses (displayName is unique per organization). */
export const unique = (prefix: string) => `${prefix} ${++seq}`;

/**
 * `count` active users of the organization inserted in SQL (userNames `${prefix}1`, `${prefix}2`, …),
 * for groups too large to fill through SCIM; their ids in insertion order.
 */
export async function insertUsers(
  db: Kysely<DB>,
  orgId: string,
  prefix: string,
  count: number,
): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    insert into users (org_id, id, user_name, active, data, created_at, updated_at)
    select ${orgId}::uuid, gen_random_uuid(), ${prefix}::text || i, true,
      jsonb_build_object('userName', ${prefix}::text || i, 'active', true), now(), now()
    from generate_series(1, ${count}) as i
    returning id`.execute(db);
  return rows.map((r) => r.id);
}

export async function createUser(
  tenant: Tenant,
  body: { userName?: string; displayName?: string } = {},
): Promise<string> {
  const res = await tenant
    .post('/Users', { schemas: [USER], userName: body.userName ?? unique('user'), ...body })
    .expect(201);
  return res.body.id as string;
}

type Ids<N extends number, R extends string[] = []> = R['length'] extends N ? R : Ids<N, [...R, string]>;

export async function createUsers<N extends number>(tenant: Tenant, n: N): Promise<Ids<N>> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push(await createUser(tenant));
  return ids as Ids<N>;
}

export async function createGroup(tenant: Tenant, body: Record<string, unknown>): Promise<Json> {
  return (await tenant.post('/Groups', { schemas: [GROUP], ...body }).expect(201)).body;
}

export async function getGroup(tenant: Tenant, id: string): Promise<Json> {
  return (await tenant.get(`/Groups/${id}`).expect(200)).body;
}

/** The member ids of a group, sorted (the order of members is not part of the contract). */
export async function memberIds(tenant: Tenant, id: string): Promise<string[]> {
  const group = await getGroup(tenant, id);
  expect(Array.isArray(group.members)).toBe(true);
  return group.members.map((m: { value: string }) => m.value).sort();
}

export const sorted = (ids: readonly string[]) => [...ids].sort();

/** Calls that need the file's harness (a getter: it exists once the file's setup ran). */
export function groupCalls(harness: () => Harness) {
  async function setGroupSync(orgId: string, groupSync: boolean): Promise<void> {
    const res = await harness()
      .http.patch(`/admin/v1/orgs/${orgId}`)
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({ groupSync })
      .expect(200);
    expect(res.body.groupSync).toBe(groupSync);
  }

  /** A tenant (org + both-scopes token) with group sync on. */
  async function groupTenant(): Promise<Tenant> {
    const tenant = await harness().tenant();
    await setGroupSync(tenant.orgId, true);
    return tenant;
  }

  /** A request under an organization's base path with any token. */
  function call(
    token: string,
    basePath: string,
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    path: string,
    body?: unknown,
  ): supertest.Test {
    const verb = method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    const req = harness()
      .http[verb](basePath + path)
      .set('Authorization', `Bearer ${token}`);
    return body === undefined ? req : req.set('Content-Type', SCIM_JSON).send(body as object);
  }

  return { setGroupSync, groupTenant, call };
}
