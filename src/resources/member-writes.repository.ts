// The batched member changes of PATCHes that name their members by id (db/write-batches.ts): removes
// then adds, with the group's lastModified and the audit entry, in one statement for many PATCHes of
// an organization. One instance per process (resource-writes.ts).
import { type Kysely, type QueryCreator, type SqlBool, sql } from 'kysely';
import type { AuditEntry } from '../audit/audit.js';
import { AUDIT_BATCH_COLUMNS, auditBatchWritten, auditValues } from '../audit/audit.repository.js';
import { MEMBER_USER_KEY, violatedForeignKey } from '../db/constraints.js';
import { isUuid } from '../db/ids.js';
import { connectionShard } from '../db/shards.js';
import { param, statement } from '../db/statement.js';
import type { DB } from '../db/tables.js';
import { batchRows, WriteBatches } from '../db/write-batches.js';
import {
  keepMemberTakingDisplay,
  membersAreUsers,
  memberValues,
  sentMembers,
} from './group-members.repository.js';
import type { NewMember } from './groups.js';

/** What a PATCH that names its members by id does to them: the rows to remove, then to add. */
export interface MemberChanges {
  /** Every member goes but those in `adds` (a replace of the member set). */
  readonly removeAll: boolean;
  /** Members to remove (when not removeAll); never one of `adds`. */
  readonly removes: readonly string[];
  /** Members to add, or whose display to set. */
  readonly adds: readonly NewMember[];
}

/** A PATCH's member changes of one group, and its audit entry. */
interface MemberChangeWrite extends MemberChanges {
  readonly groupId: string;
  readonly at: Date;
  readonly audit: AuditEntry;
}

type MemberChangeOutcome = 'missing' | 'invalid' | 'unchanged' | 'changed';

/** Removes the members each change of a batch removes by id (a step of changeMembersStatement). */
// biome-ignore lint/suspicious/noExplicitAny: the creator of a statement with a `written` step.
const removeById = (w: QueryCreator<any>) =>
  w
    .deleteFrom('group_members as gm')
    .using(
      sql`(select written.n, written.group_id, r.user_id::uuid as user_id
        from written cross join lateral jsonb_array_elements_text(written.removes) as r(user_id))`.as('x'),
    )
    .where('gm.org_id', '=', param('org'))
    .where(sql<SqlBool>`gm.group_id = x.group_id and gm.user_id = x.user_id`)
    .returning(sql<number>`x.n`.as('n'));

/**
 * Removes every member but those it adds of the group of each replace of a batch (a step of
 * changeMembersStatement; a group has one replace a batch). The groups are values computed when the
 * statement runs: each is read by its index, however many members the organization has.
 */
// biome-ignore lint/suspicious/noExplicitAny: the creator of a statement with a `written` step.
const removeOthers = (w: QueryCreator<any>) =>
  w
    .deleteFrom('group_members as gm')
    .where('gm.org_id', '=', param('org'))
    .where(sql<SqlBool>`gm.group_id = any(array(select group_id from written))`)
    .where(
      sql<SqlBool>`not exists (select from written cross join lateral ${sentMembers(sql.ref('written.adds'))}
        where written.group_id = gm.group_id and m.user_id = gm.user_id)`,
    )
    .returning(sql<number>`(select written.n from written where written.group_id = gm.group_id)`.as('n'));

/**
 * A batch of PATCHes' member changes with their audit entries, in one statement: changes to some
 * members, or (`removeAll`) replaces of the member set. Each applies only if its group exists and
 * every member it adds is a user of the organization that is not deprovisioned; its group's
 * lastModified moves only if a member row changed. Row changes, not a lock on the group: concurrent
 * PATCHes of one group never lose a member.
 */
const changeMembersStatement = (removeAll: boolean) =>
  statement((db) =>
    db
      .with('batch', (w) =>
        w
          .selectFrom(
            batchRows<{ n: number }>(
              `n integer, group_id uuid, adds jsonb, removes jsonb, at timestamptz, ${AUDIT_BATCH_COLUMNS}`,
            ),
          )
          .selectAll(),
      )
      .with('target', (w) =>
        w
          .selectFrom('batch')
          .selectAll()
          .where(
            sql<SqlBool>`exists (select from groups where groups.org_id = ${param('org')} and groups.id = batch.group_id)`,
          ),
      )
      // The changes that apply: the group exists and every member to add is a user.
      .with('written', (w) =>
        w
          .selectFrom('target')
          .selectAll()
          .where(membersAreUsers(sql.ref('target.adds'))),
      )
      .with('removed', removeAll ? removeOthers : removeById)
      .with('added', (w) =>
        w
          .insertInto('group_members')
          .columns(['org_id', 'group_id', 'user_id', 'display', 'created_at'])
          .expression(
            sql`select ${param('org')}::uuid, written.group_id, m.user_id, m.display, written.at
              from written cross join lateral ${sentMembers(sql.ref('written.adds'))}`,
          )
          .onConflict(keepMemberTakingDisplay)
          .returning(['group_id', 'user_id']),
      )
      // A member row is one change's: two changes of a batch never name the same member of a group.
      .with('changed', (w) =>
        w
          .selectFrom('removed')
          .select('n')
          .union(
            w
              .selectFrom('written')
              .select('written.n')
              .where(
                sql<SqlBool>`exists (select from ${sentMembers(sql.ref('written.adds'))}
                  join added on added.group_id = written.group_id and added.user_id = m.user_id)`,
              ),
          ),
      )
      // The time of each group's change, in the connection's shard (not the group's row, which every
      // concurrent change of the group would wait on).
      .with('touched', (w) =>
        w
          .insertInto('group_member_changes')
          .columns(['org_id', 'group_id', 'shard', 'changed_at'])
          .expression(
            sql`select ${param('org')}::uuid, written.group_id, ${connectionShard()}, max(written.at)
              from written where written.n in (select n from changed) group by written.group_id`,
          )
          .onConflict((conflict) =>
            conflict.columns(['org_id', 'group_id', 'shard']).doUpdateSet({
              changed_at: sql`greatest(group_member_changes.changed_at, excluded.changed_at)`,
            }),
          ),
      )
      .with('audited', auditBatchWritten('n'))
      .selectFrom('batch')
      .select([
        'batch.n',
        sql<boolean>`batch.n in (select n from target)`.as('found'),
        sql<boolean>`batch.n in (select n from written)`.as('applied'),
        sql<boolean>`batch.n in (select n from changed)`.as('changed'),
      ]),
  );

/** Whether two PATCHes' member changes write the same rows: one group, and a member both name or a replace. */
function sameMembers(a: MemberChangeWrite, b: MemberChangeWrite): boolean {
  if (a.groupId !== b.groupId) return false;
  if (a.removeAll || b.removeAll) return true;
  const named = new Set([...a.removes, ...a.adds.map((m) => m.userId)]);
  return b.removes.some((id) => named.has(id)) || b.adds.some((m) => named.has(m.userId));
}

/** Member changes in batches by one of changeMembersStatement's two statements. */
const memberChanges = (removeAll: boolean) => {
  const change = changeMembersStatement(removeAll);
  return new WriteBatches<MemberChangeWrite, MemberChangeOutcome>({
    row: (c) => ({
      group_id: c.groupId,
      adds: memberValues(c.adds),
      removes: c.removes
        .filter(isUuid)
        .map((id) => id.toLowerCase())
        .sort(),
      at: c.at,
      ...auditValues(c.audit, c.at),
    }),
    lockKey: (c) => c.groupId,
    writeAll: async (db, orgId, writes, batch) => {
      const result = await change.run(db, { org: orgId, batch }).catch((error: unknown) => {
        // The group, or a user to add, was deleted while the statement ran.
        const key = writes.length === 1 ? violatedForeignKey(error) : undefined;
        if (key) return key === MEMBER_USER_KEY ? 'invalid' : 'missing';
        throw error;
      });
      if (typeof result === 'string') return [result];
      const outcomes = new Map<number, MemberChangeOutcome>(
        result.rows.map((row) => [
          row.n,
          !row.found ? 'missing' : !row.applied ? 'invalid' : row.changed ? 'changed' : 'unchanged',
        ]),
      );
      return writes.map((_, n) => outcomes.get(n) ?? 'missing');
    },
    apart: sameMembers,
    weight: (c) => 1 + c.adds.length + c.removes.length,
  });
};
/** The batched member changes of PATCHes (db/write-batches.ts). One instance per process (resource-writes.ts). */
export class MemberWrites {
  /** One statement for replaces of the member set, one for changes to some members. */
  readonly #changes = { all: memberChanges(true), some: memberChanges(false) };

  /**
   * Applies member changes with the audit entry of the PATCH: `missing` when the group does not
   * exist, `invalid` when a member to add is not a user of the organization that is not
   * deprovisioned (nothing is written then), else `unchanged` or `changed` (a member row changed, and
   * the group's lastModified is `now`). Concurrent changes of an organization's groups share a
   * statement.
   */
  async change(
    db: Kysely<DB>,
    orgId: string,
    groupId: string,
    changes: MemberChanges,
    now: Date,
    audit: AuditEntry,
  ): Promise<MemberChangeOutcome> {
    if (!isUuid(groupId)) return 'missing';
    const write = { ...changes, groupId: groupId.toLowerCase(), at: now, audit };
    return this.#changes[changes.removeAll ? 'all' : 'some'].write(db, orgId, write);
  }
}
