import type { Kysely } from 'kysely';
import type { AuditEntry } from '../audit/audit.js';
import { insertAudit } from '../audit/audit.repository.js';
import type { DB } from '../db/tables.js';
import { planFilter } from '../filter/plan.js';
import { InvalidPathError } from '../http/scim-errors.js';
import { isObject, sameJson } from '../json.js';
import type { ResourceTypeDef } from '../schema/types.js';
import { claimUniqueValues } from './custom-uniqueness.js';
import * as memberRepo from './group-members.repository.js';
import type { NewMember, StoredGroup } from './groups.js';
import * as repo from './groups.repository.js';
import {
  checkedMembers,
  groupNotFound,
  memberRows,
  RELATIONS,
  refuseMembers,
  refuseNonUuids,
  separateMembers,
  uniqueDisplayName,
} from './groups.service.js';
import { groupStorage } from './groups.storage.js';
import type { MemberChanges } from './member-writes.repository.js';
import { applyPatch, type DeferredOperation, relationOperationsOf } from './patch.js';
import { parsePatchRequest } from './patch-request.js';
import type { ResourceWrites } from './resource-writes.js';

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
function memberChangesById(operations: readonly DeferredOperation[]): MemberChanges | undefined {
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
  changes: MemberChanges,
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
