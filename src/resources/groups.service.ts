// SCIM semantics for groups. Members are rows: they are checked (users of the same organization, not
// deprovisioned), added and removed one by one, and read only when a response carries them.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AuditEntry } from '../audit/audit.js';
import { isUuid } from '../db/ids.js';
import type { DB, TokenScope } from '../db/tables.js';
import { isStorableText, UNSTORABLE_TEXT_MESSAGE } from '../db/text.js';
import { InvalidValueError, NotFoundError, ServiceUnavailableError } from '../http/scim-errors.js';
import { isObject } from '../json.js';
import { findAttribute, resourceTypes, topLevelAttributes } from '../schema/registry.js';
import type { ResourceTypeDef } from '../schema/types.js';
import { claimUniqueValues, uniqueAttributesOf } from './custom-uniqueness.js';
import * as memberRepo from './group-members.repository.js';
import type { NewMember, StoredGroup, StoredMember } from './groups.js';
import * as repo from './groups.repository.js';
import { groupStorage } from './groups.storage.js';
import { withRelated } from './list-query.js';
import type { PagePositions } from './page-positions.js';
import type { ResourceWrites } from './resource-writes.js';
import type { Searchable } from './search.service.js';
import { uniqueOn } from './uniqueness.js';
import { type ScimResource, validateResource } from './validate.js';

/** The standard Group type: its core attributes are every organization's. */
const standardGroupType = resourceTypes.Group;
export const RELATIONS = new Set(['members']);
/** The longest `display` a member may carry (the registry's members.display). */
const MEMBER_DISPLAY_MAX_LENGTH =
  findAttribute(findAttribute(topLevelAttributes(standardGroupType), 'members')!.subAttributes!, 'display')!
    .maxLength ?? Number.POSITIVE_INFINITY;

/**
 * The group, its members when read, and the extensions of `type` it carries (listed in `schemas`). A
 * member's `display` is what the IdP sent with the group; a token that may read users (`scopes`) also
 * gets the user's displayName or userName where the IdP sent none, a token without that scope no data
 * of the user's own.
 */
export function renderGroup(
  group: StoredGroup,
  type: ResourceTypeDef,
  baseUrl: string,
  members: readonly StoredMember[] | undefined,
  scopes: readonly TokenScope[],
): ScimResource {
  const userData = scopes.includes('users');
  const carried = type.schemaExtensions.filter((e) => e.schema in group.attributes).map((e) => e.schema);
  return {
    schemas: [type.schema, ...carried],
    id: group.id,
    ...group.attributes,
    // Read: every member (possibly none). Not read (excludedAttributes=members): no key at all.
    ...(members
      ? {
          members: members.map((m) => {
            const display = m.display ?? (userData ? (m.userDisplayName ?? m.userName) : null);
            return {
              value: m.userId,
              $ref: `${baseUrl}/Users/${m.userId}`,
              ...(display === null ? {} : { display }),
              type: 'User',
            };
          }),
        }
      : {}),
    meta: {
      resourceType: 'Group',
      created: group.created.toISOString(),
      lastModified: group.lastModified.toISOString(),
      location: `${baseUrl}/Groups/${group.id}`,
    },
  };
}

export const uniqueDisplayName = <T>(write: Promise<T>) =>
  uniqueOn(repo.GROUP_NAME_INDEX, 'A group with this displayName already exists in the organization', write);

export function groupNotFound(id: string): NotFoundError {
  return new NotFoundError(`Group ${id} not found`);
}

/**
 * Reads the member entries of a request into rows to write (each user once), refusing an entry that
 * names no user id, a nested group, or a display scimd cannot keep.
 */
export function memberRows(entries: unknown): NewMember[] {
  const list = entries === undefined ? [] : Array.isArray(entries) ? entries : [entries];
  const members: NewMember[] = [];
  const groupsAsMembers: string[] = [];
  for (const [i, entry] of list.entries()) {
    if (!isObject(entry) || typeof entry.value !== 'string' || entry.value === '') {
      throw new InvalidValueError(`members[${i}] needs the id of a user as its value`, 'members_not_users');
    }
    if (typeof entry.display === 'string' && entry.display.length > MEMBER_DISPLAY_MAX_LENGTH) {
      throw new InvalidValueError(
        `members[${i}].display must be at most ${MEMBER_DISPLAY_MAX_LENGTH} characters`,
      );
    }
    if (typeof entry.display === 'string' && !isStorableText(entry.display)) {
      throw new InvalidValueError(`members[${i}].display ${UNSTORABLE_TEXT_MESSAGE}`);
    }
    // Groups hold users only: a nested group is refused, whatever its type says.
    if (typeof entry.type === 'string' && entry.type.toLowerCase() === 'group')
      groupsAsMembers.push(entry.value);
    members.push({
      userId: entry.value.toLowerCase(),
      display: typeof entry.display === 'string' ? entry.display : undefined,
    });
  }
  if (groupsAsMembers.length > 0) {
    throw new InvalidValueError(
      `Groups hold users only; not a user: ${groupsAsMembers.join(', ')}`,
      'members_not_users',
    );
  }
  return [...new Map(members.map((m) => [m.userId, m])).values()];
}

/** Refuses the members that are not users of this organization that are not deprovisioned. */
async function checkCandidates(db: Kysely<DB>, orgId: string, members: readonly NewMember[]): Promise<void> {
  const found = await memberRepo.findMemberCandidates(
    db,
    orgId,
    members.map((m) => m.userId),
  );
  const offending = members.filter((m) => !found.has(m.userId)).map((m) => m.userId);
  if (offending.length > 0) {
    const shown =
      offending.slice(0, 20).join(', ') +
      (offending.length > 20 ? `, and ${offending.length - 20} more` : '');
    throw new InvalidValueError(
      `Members must be users of this organization that are not deprovisioned; not such users: ${shown}`,
      'members_not_users',
    );
  }
}

/** Refuses before any statement a member whose value is no uuid: it names no user, and must not reach Postgres as a failed cast. */
export async function refuseNonUuids(
  db: Kysely<DB>,
  orgId: string,
  members: readonly NewMember[],
): Promise<void> {
  if (!members.every((m) => isUuid(m.userId))) await checkCandidates(db, orgId, members);
}

/**
 * After a statement wrote nothing because a member it was sent is not a user: the 400 naming the
 * members, or (they are all users by now, one changed while the statement ran) 503 to send it again.
 */
export async function refuseMembers(
  db: Kysely<DB>,
  orgId: string,
  members: readonly NewMember[],
  write: string,
): Promise<never> {
  await checkCandidates(db, orgId, members);
  throw new ServiceUnavailableError(`The members changed while the group was ${write}; send it again`, 1);
}

/**
 * The member rows of a request, after checking that every one is a user of this organization that
 * is not deprovisioned. Nothing is written when one is not.
 */
export async function checkedMembers(db: Kysely<DB>, orgId: string, entries: unknown): Promise<NewMember[]> {
  const members = memberRows(entries);
  await checkCandidates(db, orgId, members);
  return members;
}

/** A validated body as stored (no `schemas`: derived on output) and its members, kept apart. */
export function separateMembers(attributes: ScimResource): { attributes: ScimResource; members: unknown } {
  const { schemas: _schemas, members, ...rest } = attributes;
  return { attributes: rest, members };
}

/**
 * The group, its members (checked in the same statement) and its `audit` entry, in one statement;
 * its members as written, for the answer.
 */
export async function createGroup(
  writes: ResourceWrites,
  db: Kysely<DB>,
  orgId: string,
  type: ResourceTypeDef,
  body: unknown,
  audit: (id: string) => AuditEntry,
  now = new Date(),
): Promise<{ group: StoredGroup; members: NewMember[] }> {
  const { attributes, members } = separateMembers(validateResource(type, 'create', body));
  const rows = memberRows(members);
  await refuseNonUuids(db, orgId, rows);
  const id = randomUUID();
  const insert = (db: Kysely<DB>) =>
    uniqueDisplayName(writes.groups.insert(db, orgId, id, attributes, rows, now, audit(id)));
  // One statement, unless a value must first be taken for uniqueness (custom-uniqueness.ts).
  const group =
    uniqueAttributesOf(type).length === 0
      ? await insert(db)
      : await db.transaction().execute(async (trx) => {
          await claimUniqueValues(trx, orgId, type, attributes, undefined);
          return insert(trx);
        });
  if (!group) return refuseMembers(db, orgId, rows, 'created');
  return { group, members: rows };
}

export async function getGroup(db: Kysely<DB>, orgId: string, id: string): Promise<StoredGroup> {
  const group = await repo.findGroup(db, orgId, id);
  if (!group) throw groupNotFound(id);
  return group;
}

export async function membersOf(db: Kysely<DB>, orgId: string, groupId: string): Promise<StoredMember[]> {
  return (await memberRepo.listMembers(db, orgId, [groupId])).get(groupId) ?? [];
}

/** PUT replaces displayName, externalId and the whole member set. */
export async function replaceGroup(
  db: Kysely<DB>,
  orgId: string,
  type: ResourceTypeDef,
  id: string,
  body: unknown,
  now = new Date(),
) {
  const { attributes, members } = separateMembers(validateResource(type, 'replace', body));
  const current = await repo.findGroup(db, orgId, id, { forUpdate: true });
  if (!current) throw groupNotFound(id);
  await claimUniqueValues(db, orgId, type, attributes, id);
  const rows = await checkedMembers(db, orgId, members);
  await memberRepo.replaceMembers(db, orgId, id, rows, now);
  return uniqueDisplayName(repo.updateGroup(db, orgId, id, attributes, now));
}

export async function deleteGroup(db: Kysely<DB>, orgId: string, id: string): Promise<void> {
  if (!(await repo.deleteGroup(db, orgId, id))) throw groupNotFound(id);
}

export const searchableGroups = (
  db: Kysely<DB>,
  orgId: string,
  type: ResourceTypeDef,
  baseUrl: string,
  withMembers: boolean,
  scopes: readonly TokenScope[],
  positions: PagePositions,
): Searchable<{ item: StoredGroup; related: StoredMember[] | undefined }> => ({
  type,
  storage: groupStorage,
  createdColumn: 'created_at',
  fetch: async (query) =>
    withRelated(
      await repo.listGroups(db, orgId, query, positions),
      withMembers ? (ids) => memberRepo.listMembers(db, orgId, ids) : undefined,
    ),
  render: ({ item, related }) => renderGroup(item, type, baseUrl, related, scopes),
});
