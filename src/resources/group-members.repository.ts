// SQL for the members of groups: one row per (group, user), so adding or removing k members costs
// O(k) whatever the size of the group. Members travel as one parameter (a JSON list, or an array of
// ids): one statement text whatever their number, and no limit from the protocol's 65,535 parameters.
import { type Kysely, type OnConflictBuilder, type QueryCreator, type SqlBool, sql } from 'kysely';
import type { AuditEntry } from '../audit/audit.js';
import { auditValues, auditWritten } from '../audit/audit.repository.js';
import { isForeignKeyViolation } from '../db/constraints.js';
import { isUuid } from '../db/ids.js';
import { connectionShard } from '../db/shards.js';
import { param, StatementCache, statement } from '../db/statement.js';
import type { DB } from '../db/tables.js';
import { compileCondition, filterValues } from '../filter/compile.js';
import { conditionKey, type FilterPlan } from '../filter/plan.js';
import type { NewMember, StoredMember } from './groups.js';
import { groupStorage } from './groups.storage.js';

/**
 * A CTE step of the members sent (the `members` parameter, memberValues gives it): user_id, display.
 * They travel as JSON, whose row count Postgres does not try to foresee: with arrays it sized a
 * plan by each call's values and planned the statement again on every call.
 */
export function sentMembers() {
  // biome-ignore lint/suspicious/noExplicitAny: the creator of any statement that takes members.
  return (w: QueryCreator<any>) =>
    w
      .selectFrom(
        sql<{ user_id: string; display: string | null }>`jsonb_to_recordset(${param('members')}::jsonb)`.as(
          sql`sent(user_id uuid, display text)`,
        ),
      )
      .selectAll();
}

/** The `members` parameter of sentMembers. */
export function memberValues(members: readonly NewMember[]): { members: string } {
  return { members: JSON.stringify(members.map((m) => ({ user_id: m.userId, display: m.display ?? null }))) };
}

/** A CTE step of the members of the step `sent` that are users of the organization, not deprovisioned. */
export function validMembers() {
  // biome-ignore lint/suspicious/noExplicitAny: the creator of any statement with a `sent` step.
  return (w: QueryCreator<any>) =>
    w
      .selectFrom('sent')
      .innerJoin('users', (join) =>
        join
          .onRef('users.id', '=', 'sent.user_id')
          .on('users.org_id', '=', param('org'))
          .on('users.deprovisioned_at', 'is', null),
      )
      .select(['sent.user_id', 'sent.display']);
}

/** `= any(…)` of an array parameter of ids. */
const anyOf = (name: string) => sql<string>`any(${param(name)}::uuid[])`;

const listMembersStatement = statement((db) =>
  db
    .selectFrom('group_members as gm')
    .innerJoin('users as u', (j) => j.onRef('u.org_id', '=', 'gm.org_id').onRef('u.id', '=', 'gm.user_id'))
    .select(['gm.group_id', 'gm.user_id', 'gm.display', 'u.display_name', 'u.user_name'])
    .where('gm.org_id', '=', param('org'))
    .where('gm.group_id', '=', anyOf('groups'))
    .orderBy('gm.group_id')
    .orderBy('gm.created_at')
    .orderBy('gm.user_id'),
);

/** The members of some groups, with what is needed to render them. */
export async function listMembers(
  db: Kysely<DB>,
  orgId: string,
  groupIds: readonly string[],
): Promise<Map<string, StoredMember[]>> {
  const out = new Map<string, StoredMember[]>(groupIds.map((id) => [id, []]));
  if (groupIds.length === 0) return out;
  const { rows } = await listMembersStatement.run(db, { org: orgId, groups: groupIds });
  for (const row of rows) {
    out.get(row.group_id)?.push({
      userId: row.user_id,
      display: row.display,
      userDisplayName: row.display_name,
      userName: row.user_name,
    });
  }
  return out;
}

const memberCandidates = statement((db) =>
  db
    .selectFrom('users')
    .select('id')
    .where('org_id', '=', param('org'))
    .where('id', '=', anyOf('ids'))
    .where('deprovisioned_at', 'is', null),
);

/** Which of these ids are users of the organization that are not deprovisioned. */
export async function findMemberCandidates(
  db: Kysely<DB>,
  orgId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  const uuids = ids.filter(isUuid).map((id) => id.toLowerCase());
  if (uuids.length === 0) return new Set();
  const { rows } = await memberCandidates.run(db, { org: orgId, ids: uuids });
  return new Set(rows.map((r) => r.id));
}

/**
 * ON CONFLICT for member rows: a member already there stays, taking the display sent with it if that
 * differs (Okta's full push re-sends displays).
 */
// biome-ignore lint/suspicious/noExplicitAny: the conflict builder of any insert into group_members.
const keepMemberTakingDisplay = (conflict: OnConflictBuilder<any, any>) =>
  conflict
    .columns(['org_id', 'group_id', 'user_id'])
    .doUpdateSet({ display: sql`excluded.display` })
    .where(
      sql<SqlBool>`excluded.display is not null and group_members.display is distinct from excluded.display`,
    );

const addMembersStatement = statement((db) =>
  db
    .with('sent', sentMembers())
    .insertInto('group_members')
    .columns(['org_id', 'group_id', 'user_id', 'display', 'created_at'])
    .expression(
      sql`select ${param('org')}::uuid, ${param('group')}::uuid, sent.user_id, sent.display, ${param('now')}::timestamptz
        from sent`,
    )
    .onConflict(keepMemberTakingDisplay),
);

/** Adds members (keepMemberTakingDisplay). Returns how many rows were added or changed. */
export async function addMembers(
  db: Kysely<DB>,
  orgId: string,
  groupId: string,
  members: readonly NewMember[],
  now: Date,
): Promise<number> {
  if (members.length === 0) return 0;
  const result = await addMembersStatement.run(db, {
    org: orgId,
    group: groupId,
    now,
    ...memberValues(members),
  });
  return Number(result.numAffectedRows ?? 0n);
}

/** What a PATCH that names its members by id does to them: the rows to remove, then to add. */
export interface MemberChanges {
  /** Every member goes but those in `adds` (a replace of the member set). */
  readonly removeAll: boolean;
  /** Members to remove (when not removeAll); never one of `adds`. */
  readonly removes: readonly string[];
  /** Members to add, or whose display to set. */
  readonly adds: readonly NewMember[];
}

/**
 * A PATCH's member changes and its audit entry in one statement. They apply only if the group exists
 * and every member to add is a user of the organization that is not deprovisioned; the group's
 * lastModified moves only if a member row changed. Row changes, not a lock on the group: concurrent
 * PATCHes of one group never lose a member.
 */
const changeMembersStatement = (removeAll: boolean) =>
  statement((db) =>
    db
      .with('target', (w) =>
        w
          .selectFrom('groups')
          .select('id')
          .where('org_id', '=', param('org'))
          .where('id', '=', param('group')),
      )
      .with('sent', sentMembers())
      .with('valid', validMembers())
      // One row when the changes apply: the group exists and every member to add is a user.
      .with('written', (w) =>
        w
          .selectFrom('target')
          .select('id')
          .where(sql<SqlBool>`(select count(*) from valid) = (select count(*) from sent)`),
      )
      .with('removed', (w) =>
        w
          .deleteFrom('group_members')
          .where('org_id', '=', param('org'))
          // The group and the ids as values computed when the statement runs, not parameters: a plan
          // that knew the group's size would beat the generic one, and be made again on every call.
          .where('group_id', '=', sql<string>`(select id from written)`)
          .where(
            removeAll
              ? sql<SqlBool>`user_id not in (select user_id from sent)`
              : sql<SqlBool>`user_id = any(array(select value::uuid from jsonb_array_elements_text(${param('removes')}::jsonb)))`,
          )
          .returning('user_id'),
      )
      .with('added', (w) =>
        w
          .insertInto('group_members')
          .columns(['org_id', 'group_id', 'user_id', 'display', 'created_at'])
          .expression(
            sql`select ${param('org')}::uuid, written.id, valid.user_id, valid.display, ${param('now')}::timestamptz
            from written cross join valid`,
          )
          .onConflict(keepMemberTakingDisplay)
          .returning('user_id'),
      )
      // The time of the change, in the connection's shard (not the group's row, which every
      // concurrent change of the group would wait on).
      .with('touched', (w) =>
        w
          .insertInto('group_member_changes')
          .columns(['org_id', 'group_id', 'shard', 'changed_at'])
          .expression(
            sql`select ${param('org')}::uuid, written.id, ${connectionShard()}, ${param('now')}::timestamptz
            from written where exists (select 1 from removed) or exists (select 1 from added)`,
          )
          .onConflict((conflict) =>
            conflict.columns(['org_id', 'group_id', 'shard']).doUpdateSet({
              changed_at: sql`greatest(group_member_changes.changed_at, excluded.changed_at)`,
            }),
          )
          .returning('group_id'),
      )
      .with('audited', auditWritten())
      .selectNoFrom([
        sql<string>`(select count(*) from target)`.as('found'),
        sql<string>`(select count(*) from written)`.as('applied'),
        sql<string>`(select count(*) from touched)`.as('changed'),
      ]),
  );
/** One statement for a replace of the member set, one for changes to some members. */
const CHANGE_MEMBERS = { all: changeMembersStatement(true), some: changeMembersStatement(false) };

/**
 * Applies member changes with the audit entry of the PATCH: `missing` when the group does not exist,
 * `invalid` when a member to add is not a user of the organization that is not deprovisioned
 * (nothing is written then), else `unchanged` or `changed` (a member row changed, and the group's
 * lastModified is `now`).
 */
export async function changeMembers(
  db: Kysely<DB>,
  orgId: string,
  groupId: string,
  changes: MemberChanges,
  now: Date,
  audit: AuditEntry,
): Promise<'missing' | 'invalid' | 'unchanged' | 'changed'> {
  if (!isUuid(groupId)) return 'missing';
  const { rows } = await CHANGE_MEMBERS[changes.removeAll ? 'all' : 'some']
    .run(db, {
      org: orgId,
      group: groupId,
      now,
      removes: JSON.stringify(changes.removes.filter(isUuid).map((id) => id.toLowerCase())),
      ...memberValues(changes.adds),
      ...auditValues(audit, now),
    })
    .catch((error: unknown) => {
      // The group was deleted while the statement ran: its member rows could not refer to it.
      if (isForeignKeyViolation(error)) return { rows: [{ found: '0', applied: '0', changed: '0' }] };
      throw error;
    });
  const { found, applied, changed } = rows[0]!;
  if (Number(found) === 0) return 'missing';
  if (Number(applied) === 0) return 'invalid';
  return Number(changed) > 0 ? 'changed' : 'unchanged';
}

const removeAllMembers = statement((db) =>
  db.deleteFrom('group_members').where('org_id', '=', param('org')).where('group_id', '=', param('group')),
);
const removeMembersById = statement((db) =>
  db
    .deleteFrom('group_members')
    .where('org_id', '=', param('org'))
    .where('group_id', '=', param('group'))
    .where('user_id', '=', anyOf('users')),
);
const removals = new StatementCache();

/**
 * Removes the members these ids name, or those the filter selects, or (neither given) all of them.
 * Returns how many went.
 */
export async function removeMembers(
  db: Kysely<DB>,
  orgId: string,
  groupId: string,
  ids: readonly string[] | undefined,
  filter?: FilterPlan,
): Promise<number> {
  const values = { org: orgId, group: groupId };
  let result: { numAffectedRows?: bigint };
  if (filter) {
    const removal = removals.get(conditionKey(filter.condition), (b) =>
      b
        .deleteFrom('group_members as gm')
        .where('gm.org_id', '=', param('org'))
        .where('gm.group_id', '=', param('group'))
        .where(compileCondition(filter.condition, groupStorage)),
    );
    result = await removal.run(db, { ...values, ...filterValues(filter) });
  } else if (ids) {
    const uuids = ids.filter(isUuid).map((id) => id.toLowerCase());
    if (uuids.length === 0) return 0;
    result = await removeMembersById.run(db, { ...values, users: uuids });
  } else {
    result = await removeAllMembers.run(db, values);
  }
  return Number(result.numAffectedRows ?? 0n);
}

const removeOtherMembers = statement((db) =>
  db
    .deleteFrom('group_members')
    .where('org_id', '=', param('org'))
    .where('group_id', '=', param('group'))
    // `<> all` of an empty array is true: with no members given, every member goes.
    .where('user_id', '<>', sql<string>`all(${param('kept')}::uuid[])`),
);

/** Makes the member set exactly `members`: removes the others, adds the new. */
export async function replaceMembers(
  db: Kysely<DB>,
  orgId: string,
  groupId: string,
  members: readonly NewMember[],
  now: Date,
): Promise<number> {
  const removed = await removeOtherMembers.run(db, {
    org: orgId,
    group: groupId,
    kept: members.map((m) => m.userId),
  });
  return Number(removed.numAffectedRows ?? 0n) + (await addMembers(db, orgId, groupId, members, now));
}
