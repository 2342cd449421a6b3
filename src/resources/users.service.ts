// SCIM semantics for users: validation, rendering, and the rules of RFC 7644 §3.3–§3.6.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AuditEntry } from '../audit/audit.js';
import { insertAudit } from '../audit/audit.repository.js';
import type { DB, DeprovisioningMode, TokenScope } from '../db/tables.js';
import { NotFoundError, ServiceUnavailableError } from '../http/scim-errors.js';
import { sameJson } from '../json.js';
import { checkCatalogued } from '../roles/catalogue-values.js';
import { findAttribute, resourceTypes, topLevelAttributes } from '../schema/registry.js';
import type { AttributeDef, ResourceTypeDef } from '../schema/types.js';
import { claimUniqueValues, uniqueAttributesOf } from './custom-uniqueness.js';
import type { PagePositions } from './page-positions.js';
import { applyPatch, mergePatchOf } from './patch.js';
import { parsePatchRequest } from './patch-request.js';
import type { Searchable } from './search.service.js';
import { uniqueOn } from './uniqueness.js';
import { listUsers, userStorage } from './user-pages.repository.js';
import type { UserWrites } from './user-writes.repository.js';
import type { StoredUser } from './users.js';
import * as repo from './users.repository.js';
import { type ScimResource, validateResource } from './validate.js';

/** The standard User type: its core attributes are every organization's. */
const standardUserType = resourceTypes.User;

/** User.groups: the organization's groups, which a token without the groups scope may not read. */
const groupsAttribute = findAttribute(topLevelAttributes(standardUserType), 'groups')!;
const GROUPS_HIDDEN: ReadonlySet<AttributeDef> = new Set([groupsAttribute]);

/** Whether a token may see which groups a user is in (a token's scopes limit the resource types it sees). */
function mayReadGroups(scopes: readonly TokenScope[]): boolean {
  return scopes.includes('groups');
}

/** The user as a token of these scopes may see it: without the groups scope, no `groups`. */
export function visibleTo(user: StoredUser, scopes: readonly TokenScope[]): StoredUser {
  return mayReadGroups(scopes) || user.groups === undefined ? user : { ...user, groups: undefined };
}

/**
 * `groups` (RFC 7643 §4.1.2) appears when the user was read with its memberships and has some; the
 * extensions of `type` the user carries follow the core attributes, and `schemas` lists them.
 */
export function renderUser(user: StoredUser, type: ResourceTypeDef, baseUrl: string): ScimResource {
  const core: ScimResource = {};
  const extensions: ScimResource = {};
  const carried: string[] = [];
  for (const [key, value] of Object.entries(user.attributes)) {
    if (isExtensionOf(type, key)) {
      extensions[key] = value;
      carried.push(key);
    } else core[key] = value;
  }
  const { schemas, id, groups, meta } = userEnvelope(user, type, baseUrl, carried);
  return { schemas, id, ...core, ...(groups ? { groups } : {}), ...extensions, meta };
}

const isExtensionOf = (type: ResourceTypeDef, key: string) =>
  key.startsWith('urn:') && type.schemaExtensions.some((e) => e.schema === key);

/**
 * The user as JSON text, its stored attributes joined in as read (undefined unless read as text):
 * what renderUser gives, without parsing and serializing them again. jsonb's text writes each key as
 * `"key": `, which no string value can contain (its quotes are escaped), so an extension's key
 * shows whether the user carries it.
 */
function renderUserJson(user: StoredUser, type: ResourceTypeDef, baseUrl: string): string | undefined {
  const { json } = user;
  if (json === undefined) return undefined;
  const carried = type.schemaExtensions.filter((e) => json.includes(`"${e.schema}": `)).map((e) => e.schema);
  const head = JSON.stringify(userEnvelope(user, type, baseUrl, carried));
  return json === '{}' ? head : `${head.slice(0, -1)},${json.slice(1)}`;
}

/** What a rendered user carries besides its stored attributes. */
function userEnvelope(
  user: StoredUser,
  type: ResourceTypeDef,
  baseUrl: string,
  extensions: readonly string[],
) {
  const { groups } = user;
  return {
    schemas: [type.schema, ...extensions],
    id: user.id,
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
    meta: {
      resourceType: 'User',
      created: user.created.toISOString(),
      lastModified: user.lastModified.toISOString(),
      location: `${baseUrl}/Users/${user.id}`,
    },
  };
}

/** The attributes with a default value (the registry's defaultValue): `active`. */
const defaulted = topLevelAttributes(standardUserType).filter((a) => a.defaultValue !== undefined);

/**
 * What is stored of a validated body: no `schemas` (derived on output) and no writeOnly values, and
 * the registry's default for what the body leaves out. scimd does not keep passwords: the product
 * authenticates users through the IdP.
 */
function toStoredAttributes(attributes: ScimResource): ScimResource {
  const rest = storedPart(attributes);
  for (const attr of defaulted) rest[attr.name] ??= attr.defaultValue;
  return rest;
}

function storedPart(attributes: ScimResource): ScimResource {
  const { schemas: _schemas, password: _password, ...rest } = attributes;
  return rest;
}

const uniqueUserName = <T>(write: Promise<T>) =>
  uniqueOn(repo.USER_NAME_INDEX, 'A user with this userName already exists in the organization', write);

/** `audit` gives the audit entry of the creation, written in the same statement (audited-write.ts). */
export async function createUser(
  writes: UserWrites,
  db: Kysely<DB>,
  orgId: string,
  type: ResourceTypeDef,
  body: unknown,
  audit?: (id: string) => AuditEntry,
): Promise<StoredUser> {
  const attributes = toStoredAttributes(validateResource(type, 'create', body));
  await checkCatalogued(db, orgId, attributes);
  const id = randomUUID();
  const now = new Date();
  await withUniqueValues(db, orgId, type, attributes, undefined, (db) =>
    uniqueUserName(writes.insert(db, orgId, { id, attributes, at: now, audit: audit?.(id) })),
  );
  // A user this statement has just created belongs to no group yet.
  return { id, attributes, created: now, lastModified: now, groups: [] };
}

/**
 * `write`, alone when the type has no unique attributes of the organization's own; otherwise in a
 * transaction that first takes the user's values of them (custom-uniqueness.ts).
 */
function withUniqueValues<T>(
  db: Kysely<DB>,
  orgId: string,
  type: ResourceTypeDef,
  attributes: ScimResource,
  self: string | undefined,
  write: (db: Kysely<DB>) => Promise<T>,
): Promise<T> {
  if (uniqueAttributesOf(type).length === 0) return write(db);
  return db.transaction().execute(async (trx) => {
    await claimUniqueValues(trx, orgId, type, attributes, self);
    return write(trx);
  });
}

export async function getUser(db: Kysely<DB>, orgId: string, id: string): Promise<StoredUser> {
  const user = await repo.findUser(db, orgId, id);
  if (!user) throw userNotFound(id);
  return user;
}

/**
 * RFC 7644 §3.5.1: PUT replaces every writable attribute; what the body omits is cleared. One
 * statement writes the user and its `audit` entry.
 */
export async function replaceUser(
  writes: UserWrites,
  db: Kysely<DB>,
  orgId: string,
  type: ResourceTypeDef,
  id: string,
  body: unknown,
  audit: AuditEntry,
): Promise<StoredUser> {
  const attributes = toStoredAttributes(validateResource(type, 'replace', body));
  await checkCatalogued(
    db,
    orgId,
    attributes,
    async () => (await repo.findUser(db, orgId, id, { groups: false }))?.attributes,
  );
  const replaced = await withUniqueValues(db, orgId, type, attributes, id, (db) =>
    uniqueUserName(writes.replace(db, orgId, id, attributes, new Date(), audit)),
  );
  if (!replaced) throw userNotFound(id);
  return replaced;
}

/** How often a PATCH reads and writes again after another write to the user came first. */
const PATCH_ATTEMPTS = 100;

/**
 * RFC 7644 §3.5.2. Operations whose result does not depend on the stored user (setting `active`,
 * a name, a title) are merged into the row by one statement. Others read the user, apply the
 * operations in memory, validate, and write the result only if the row is still the one read (its
 * version); when another write came first, they read again and apply the operations to what it
 * wrote, so concurrent PATCHes never lose an update. Either way the write and its `audit` entry are
 * one statement, and when the operations change nothing, meta.lastModified stays.
 */
export async function patchUser(
  writes: UserWrites,
  db: Kysely<DB>,
  orgId: string,
  type: ResourceTypeDef,
  id: string,
  body: unknown,
  audit: AuditEntry,
): Promise<StoredUser> {
  const operations = parsePatchRequest(body);
  // A merge writes without reading the user: not when a value must be checked for uniqueness first.
  const merge = uniqueAttributesOf(type).length === 0 ? mergePatchOf(operations, type, { id }) : undefined;
  if (merge) {
    const merged = await uniqueUserName(writes.merge(db, orgId, id, storedPart(merge), new Date(), audit));
    if (!merged) throw userNotFound(id);
    return merged;
  }
  for (let attempt = 1; attempt <= PATCH_ATTEMPTS; attempt++) {
    // Read without its groups: the write returns them.
    const current = await repo.findUser(db, orgId, id, { groups: false });
    if (!current) throw userNotFound(id);
    const next = toStoredAttributes(applyPatch(current.attributes, operations, type, { id }).attributes);
    await checkCatalogued(db, orgId, next, current.attributes);
    if (sameJson(next, current.attributes)) {
      await insertAudit(db, [{ entry: audit, at: new Date() }]);
      return (await repo.findUser(db, orgId, id)) ?? current;
    }
    const updated = await withUniqueValues(db, orgId, type, next, id, (db) =>
      uniqueUserName(writes.replace(db, orgId, id, next, new Date(), audit, current.version)),
    );
    if (updated) return updated;
  }
  throw new ServiceUnavailableError(`User ${id} kept changing while this PATCH applied; send it again`, 1);
}

/**
 * DELETE applies the organization's deprovisioning mode, with its `audit` entry, in one statement.
 * In every mode the SCIM view answers 404 for the id afterwards, the user leaves every group, and its
 * userName can be provisioned again.
 */
export async function deleteUser(
  writes: UserWrites,
  db: Kysely<DB>,
  org: { id: string; deprovisioning: DeprovisioningMode },
  id: string,
  audit: AuditEntry,
): Promise<void> {
  if (!(await writes.remove(db, org.id, id, org.deprovisioning, new Date(), audit))) throw userNotFound(id);
}

/** `withGroups`: the page carries each user's groups; only for a token that may read them. */
export const searchableUsers = (
  db: Kysely<DB>,
  orgId: string,
  type: ResourceTypeDef,
  baseUrl: string,
  scopes: readonly TokenScope[],
  withGroups: boolean,
  positions: PagePositions,
): Searchable<StoredUser> => ({
  type,
  ...(mayReadGroups(scopes) ? {} : { hidden: GROUPS_HIDDEN }),
  storage: userStorage,
  createdColumn: 'created_at',
  fetch: (query) => listUsers(db, orgId, query, { groups: withGroups && mayReadGroups(scopes), positions }),
  render: (user) => renderUser(user, type, baseUrl),
  renderWhole: (user) => renderUserJson(user, type, baseUrl),
});

function userNotFound(id: string): NotFoundError {
  return new NotFoundError(`User ${id} not found`);
}
