// SCIM semantics for users: validation, rendering, and the rules of RFC 7644 §3.3–§3.6.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AuditRow } from '../audit/audit.js';
import type { DB, DeprovisioningMode } from '../db/tables.js';
import { NotFoundError } from '../http/scim-errors.js';
import { ENTERPRISE_USER_SCHEMA_URN, resourceTypes, USER_SCHEMA_URN } from '../schema/registry.js';
import { removeFromAllGroups } from './groups.repository.js';
import { sameJson } from './json.js';
import { applyPatch } from './patch.js';
import { parsePatchRequest } from './patch-request.js';
import type { Searchable } from './search.service.js';
import * as repo from './users.repository.js';
import { type ScimResource, validateResource } from './validate.js';

export const userType = resourceTypes.User;

/** `groups` (RFC 7643 §4.1.2) appears when the user was read with its memberships and has some. */
export function renderUser(user: repo.StoredUser, baseUrl: string): ScimResource {
  const { groups } = user;
  const { [ENTERPRISE_USER_SCHEMA_URN]: enterprise, ...core } = user.attributes;
  return {
    schemas: enterprise ? [USER_SCHEMA_URN, ENTERPRISE_USER_SCHEMA_URN] : [USER_SCHEMA_URN],
    id: user.id,
    ...core,
    ...(groups && groups.length > 0
      ? {
          groups: groups.map((g) => ({
            value: g.groupId,
            $ref: `${baseUrl}/Groups/${g.groupId}`,
            display: g.displayName,
            type: 'direct',
          })),
        }
      : {}),
    ...(enterprise ? { [ENTERPRISE_USER_SCHEMA_URN]: enterprise } : {}),
    meta: {
      resourceType: 'User',
      created: user.created.toISOString(),
      lastModified: user.lastModified.toISOString(),
      location: `${baseUrl}/Users/${user.id}`,
    },
  };
}

/**
 * What is stored of a validated body: no `schemas` (derived on output) and no writeOnly values.
 * scimd does not keep passwords: the product authenticates users through the IdP.
 * `active` defaults to true.
 */
function storable(attributes: ScimResource): ScimResource {
  const { schemas: _schemas, password: _password, ...rest } = attributes;
  // A user is active unless told otherwise; the response, the `active` column and filters agree.
  return { ...rest, active: rest.active ?? true };
}

/** `audit` gives the audit row of the creation, written in the same statement (scim-state.ts). */
export async function createUser(
  db: Kysely<DB>,
  orgId: string,
  body: unknown,
  audit?: (id: string) => AuditRow | undefined,
): Promise<repo.StoredUser> {
  const attributes = storable(validateResource(userType, 'create', body));
  const id = randomUUID();
  return repo.insertUser(db, orgId, id, attributes, new Date(), audit?.(id));
}

export async function getUser(db: Kysely<DB>, orgId: string, id: string): Promise<repo.StoredUser> {
  const user = await repo.findUser(db, orgId, id);
  if (!user) throw userNotFound(id);
  return user;
}

/** RFC 7644 §3.5.1: PUT replaces every writable attribute; what the body omits is cleared. */
export async function replaceUser(
  db: Kysely<DB>,
  orgId: string,
  id: string,
  body: unknown,
): Promise<repo.StoredUser> {
  const attributes = storable(validateResource(userType, 'replace', body));
  const current = await repo.findUser(db, orgId, id, { forUpdate: true });
  if (!current) throw userNotFound(id);
  const replaced = await repo.replaceUser(db, orgId, id, attributes, new Date());
  if (!replaced) throw userNotFound(id);
  // A write to the user leaves its memberships as the locked read found them.
  return { ...replaced, groups: current.groups };
}

/**
 * RFC 7644 §3.5.2: read the user under a row lock, apply the operations in memory, validate, write,
 * all in the caller's transaction, so concurrent PATCHes on one user never lose an update. Nothing
 * is written (and meta.lastModified stays) when the operations change nothing.
 */
export async function patchUser(
  db: Kysely<DB>,
  orgId: string,
  id: string,
  body: unknown,
): Promise<repo.StoredUser> {
  const operations = parsePatchRequest(body);
  const current = await repo.findUser(db, orgId, id, { forUpdate: true });
  if (!current) throw userNotFound(id);
  const next = storable(applyPatch(current.attributes, operations, userType, { id }).attributes);
  if (sameJson(next, current.attributes)) return current;
  const updated = await repo.replaceUser(db, orgId, id, next, new Date());
  if (!updated) throw userNotFound(id);
  return { ...updated, groups: current.groups };
}

/**
 * DELETE applies the organization's deprovisioning mode (product spec). In every mode the SCIM view
 * answers 404 for the id afterwards, the user leaves every group (in this transaction), and its
 * userName can be provisioned again.
 */
export async function deleteUser(
  db: Kysely<DB>,
  org: { id: string; deprovisioning: DeprovisioningMode },
  id: string,
): Promise<void> {
  const now = new Date();
  const done =
    org.deprovisioning === 'delete'
      ? await repo.deleteUser(db, org.id, id)
      : await repo.deprovisionUser(db, org.id, id, org.deprovisioning, now);
  if (!done) throw userNotFound(id);
  // A deleted row takes its memberships with it (foreign key); a kept one must leave its groups.
  if (org.deprovisioning !== 'delete') await removeFromAllGroups(db, org.id, id);
}

export const searchableUsers = (
  db: Kysely<DB>,
  orgId: string,
  baseUrl: string,
  withGroups: boolean,
): Searchable<repo.StoredUser> => ({
  type: userType,
  storage: repo.userStorage,
  createdColumn: 'created_at',
  fetch: (query) => repo.listUsers(db, orgId, query, { groups: withGroups }),
  render: (user) => renderUser(user, baseUrl),
});

function userNotFound(id: string): NotFoundError {
  return new NotFoundError(`User ${id} not found`);
}
