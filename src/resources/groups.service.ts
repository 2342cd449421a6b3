// SCIM semantics for groups. Members are rows: they are checked (users of the same organization, not
// deprovisioned), added and removed one by one, and read only when a response carries them.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AuditEntry } from '../audit/audit.js';
import { insertAudit } from '../audit/audit.repository.js';
import { isUuid } from '../db/ids.js';
import type { DB, TokenScope } from '../db/tables.js';
import { isStorableText, UNSTORABLE_TEXT_MESSAGE } from '../db/text.js';
import { planFilter } from '../filter/plan.js';
import {
  InvalidPathError,
  InvalidValueError,
  NotFoundError,
  ServiceUnavailableError,
} from '../http/scim-errors.js';
import { isObject, sameJson } from '../json.js';
import { findAttribute, resourceTypes, topLevelAttributes } from '../schema/registry.js';
import type { ResourceTypeDef } from '../schema/types.js';
import { claimUniqueValues, uniqueAttributesOf } from './custom-uniqueness.js';
import * as memberRepo from './group-members.repository.js';
import type { NewMember, StoredGroup, StoredMember } from './groups.js';
import * as repo from './groups.repository.js';
import { groupStorage } from './groups.storage.js';
import { withRelated } from './list-query.js';
import { applyPatch, type DeferredOperation, relationOperationsOf } from './patch.js';
import { parsePatchRequest } from './patch-request.js';
import type { ResourceWrites } from './resource-writes.js';
import type { Searchable } from './search.service.js';
import { uniqueOn } from './uniqueness.js';
import { type ScimResource, validateResource } from './validate.js';

/** The standard Group type: its core attributes are every organization's. */
const standardGroupType = resourceTypes.Group;
const RELATIONS = new Set(['members']);
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

const uniqueDisplayName = <T>(write: Promise<T>) =>
  uniqueOn(repo.GROUP_NAME_INDEX, 'A group with this displayName already exists in the organization', write);

function groupNotFound(id: string): NotFoundError {
  return new NotFoundError(`Group ${id} not found`);
}

/**
 * Reads the member entries of a request into rows to write (each user once), refusing an entry that
 * names no user id, a nested group, or a display scimd cannot keep.
 */
function memberRows(entries: unknown): NewMember[] {
  const list = entries === undefined ? [] : Array.isArray(entries) ? entries : [entries];
  const members: NewMember[] = [];
  const groupsAsMembers: string[] = [];
  for (const [i, entry] of list.entries()) {
    if (!isObject(entry) || typeof entry.value !== 'string' || entry.value === '') {
      throw new InvalidValueError(`members[${i}] needs the id of a user as its value`);
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
    throw new InvalidValueError(`Groups hold users only; not a user: ${groupsAsMembers.join(', ')}`);
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
    );
  }
}

/** Refuses before any statement a member whose value is no uuid: it names no user, and must not reach Postgres as a failed cast. */
async function refuseNonUuids(db: Kysely<DB>, orgId: string, members: readonly NewMember[]): Promise<void> {
  if (!members.every((m) => isUuid(m.userId))) await checkCandidates(db, orgId, members);
}

/**
 * After a statement wrote nothing because a member it was sent is not a user: the 400 naming the
 * members, or (they are all users by now, one changed while the statement ran) 503 to send it again.
 */
async function refuseMembers(
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
async function checkedMembers(db: Kysely<DB>, orgId: string, entries: unknown): Promise<NewMember[]> {
  const members = memberRows(entries);
  await checkCandidates(db, orgId, members);
  return members;
}

/** A validated body as stored (no `schemas`: derived on output) and its members, kept apart. */
function separateMembers(attributes: ScimResource): { attributes: ScimResource; members: unknown } {
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

/** Applies an operation on members as row changes; returns how many rows changed. */
async function applyMemberOperation(
  db: Kysely<DB>,
  orgId: string,
  groupId: string,
  op: DeferredOperation,
  now: Date,
) {
  if (op.op === 'remove') {
    if (op.filter) {
      return memberRepo.removeMembers(
        db,
        orgId,
        groupId,
        undefined,
        planFilter(op.filter, groupStorage, 'members'),
      );
    }
    // Entra removes chosen members with `Remove` + a value list; without a value, all members go.
    if (op.value !== undefined) return memberRepo.removeMembers(db, orgId, groupId, removedIds(op.value));
    return memberRepo.removeMembers(db, orgId, groupId, undefined);
  }
  if (op.filter) {
    throw new InvalidPathError(
      'members[…] with a filter can only be removed; add or replace members by value',
    );
  }
  const rows = await checkedMembers(db, orgId, op.value);
  return op.op === 'add'
    ? memberRepo.addMembers(db, orgId, groupId, rows, now)
    : memberRepo.replaceMembers(db, orgId, groupId, rows, now);
}

/** The id a member filter names, when it is exactly `value eq "<id>"`. */
function filteredId(filter: DeferredOperation['filter']): string | undefined {
  if (filter?.kind !== 'compare' || filter.op !== 'eq' || typeof filter.value !== 'string') return undefined;
  const target = filter.target;
  const named = target.kind === 'element' ? target.sub : (target.sub ?? target.attribute);
  return named.name === 'value' ? filter.value.toLowerCase() : undefined;
}

/** The ids of a remove's value list (Entra's `Remove` of chosen members). */
function removedIds(value: unknown): string[] {
  return (Array.isArray(value) ? value : [value])
    .map((v) => (isObject(v) ? v.value : undefined))
    .filter((v): v is string => typeof v === 'string')
    .map((v) => v.toLowerCase());
}

/**
 * What member operations come to when each names its members by id: the last operation on an id
 * decides whether it is a member. Undefined when one does not (a filter on anything but the id).
 */
function memberChangesById(operations: readonly DeferredOperation[]): memberRepo.MemberChanges | undefined {
  const last = new Map<string, NewMember | 'remove'>();
  let removeAll = false;
  for (const op of operations) {
    if (op.op === 'remove' && op.filter) {
      const id = filteredId(op.filter);
      if (id === undefined) return undefined;
      last.set(id, 'remove');
    } else if (op.op === 'remove' && op.value !== undefined) {
      for (const id of removedIds(op.value)) last.set(id, 'remove');
    } else if (op.op === 'remove') {
      removeAll = true;
      last.clear();
    } else {
      if (op.filter) return undefined;
      if (op.op === 'replace') {
        removeAll = true;
        last.clear();
      }
      for (const member of memberRows(op.value)) {
        const before = last.get(member.userId);
        // A display sent earlier stays unless a later add sends another.
        const display = member.display ?? (before === 'remove' ? undefined : before?.display);
        last.set(member.userId, { userId: member.userId, display });
      }
    }
  }
  const entries = [...last.entries()];
  return {
    removeAll,
    removes: entries.filter(([, change]) => change === 'remove').map(([id]) => id),
    adds: entries.flatMap(([, change]) => (change === 'remove' ? [] : [change])),
  };
}

/**
 * PATCH, with its `audit` entry. When the operations change only members, each named by id (what
 * Okta and Entra send for every assignment), they are one statement, and concurrent ones do not wait
 * on each other; unless `answer` asks for the group afterwards, the group is not read at all (the
 * answer is then undefined). Any other PATCH (attributes, or members removed by a filter on something
 * else) runs in a transaction under a lock on the group: the group's attributes through applyPatch,
 * its members as row inserts and deletes in order. meta.lastModified moves only when something
 * changed.
 */
export async function patchGroup(
  writes: ResourceWrites,
  db: Kysely<DB>,
  orgId: string,
  type: ResourceTypeDef,
  id: string,
  body: unknown,
  audit: AuditEntry,
  answer: boolean,
  now = new Date(),
): Promise<StoredGroup | undefined> {
  const operations = parsePatchRequest(body);
  const options = { id, relations: RELATIONS };
  const memberOperations = answer ? undefined : relationOperationsOf(operations, type, options);
  const unread = memberOperations && memberChangesById(memberOperations);
  if (unread) {
    await changeMembersById(writes, db, orgId, id, unread, now, audit);
    return undefined;
  }
  const current = await repo.findGroup(db, orgId, id);
  if (!current) throw groupNotFound(id);
  const result = applyPatch(current.attributes, operations, type, options);
  const changes = sameJson(separateMembers(result.attributes).attributes, current.attributes)
    ? memberChangesById(result.deferred)
    : undefined;
  if (changes) {
    const changed = await changeMembersById(writes, db, orgId, id, changes, now, audit);
    return changed ? { ...current, lastModified: now } : current;
  }
  return db.transaction().execute(async (trx) => {
    const group = await patchGroupLocked(trx, orgId, type, id, operations, now);
    await insertAudit(trx, [{ entry: audit, at: now }]);
    return group;
  });
}

/** Member changes by id with the PATCH's audit entry, in one statement; whether a member row changed. */
async function changeMembersById(
  writes: ResourceWrites,
  db: Kysely<DB>,
  orgId: string,
  id: string,
  changes: memberRepo.MemberChanges,
  now: Date,
  audit: AuditEntry,
): Promise<boolean> {
  await refuseNonUuids(db, orgId, changes.adds);
  const outcome = await writes.members.change(db, orgId, id, changes, now, audit);
  if (outcome === 'missing') throw groupNotFound(id);
  if (outcome === 'invalid') return refuseMembers(db, orgId, changes.adds, 'patched');
  return outcome === 'changed';
}

async function patchGroupLocked(
  db: Kysely<DB>,
  orgId: string,
  type: ResourceTypeDef,
  id: string,
  operations: ReturnType<typeof parsePatchRequest>,
  now: Date,
): Promise<StoredGroup> {
  const current = await repo.findGroup(db, orgId, id, { forUpdate: true });
  if (!current) throw groupNotFound(id);
  const result = applyPatch(current.attributes, operations, type, { id, relations: RELATIONS });
  let changedRows = 0;
  for (const op of result.deferred) changedRows += await applyMemberOperation(db, orgId, id, op, now);
  const attributes = separateMembers(result.attributes).attributes;
  const attributesChanged = !sameJson(attributes, current.attributes);
  if (!attributesChanged && changedRows === 0) return current;
  if (attributesChanged) await claimUniqueValues(db, orgId, type, attributes, id);
  return uniqueDisplayName(repo.updateGroup(db, orgId, id, attributesChanged ? attributes : undefined, now));
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
): Searchable<{ item: StoredGroup; related: StoredMember[] | undefined }> => ({
  type,
  storage: groupStorage,
  createdColumn: 'created_at',
  fetch: async (query) =>
    withRelated(
      await repo.listGroups(db, orgId, query),
      withMembers ? (ids) => memberRepo.listMembers(db, orgId, ids) : undefined,
    ),
  render: ({ item, related }) => renderGroup(item, type, baseUrl, related, scopes),
});
