// SQL for the members of groups: one row per (group, user), so adding or removing k members costs
// O(k) whatever the size of the group. Members travel as one parameter (a JSON list, or an array of
// ids): one statement text whatever their number, and no limit from the protocol's 65,535 parameters.
import { type Expression, type Kysely, type OnConflictBuilder, type SqlBool, sql } from 'kysely';
import { isUuid } from '../db/ids.js';
import { param, StatementCache, statement } from '../db/statement.js';
import type { DB } from '../db/tables.js';
import { inLockOrder } from '../db/write-batches.js';
import { compileCondition, filterValues } from '../filter/compile.js';
import { conditionKey, type FilterPlan } from '../filter/plan.js';
import type { NewMember, StoredMember } from './groups.js';
import { groupStorage } from './groups.storage.js';

/**
 * The members in a JSON list (memberValues gives one) as rows `m(user_id, display)`, for a `from` or
 * a lateral join. JSON, whose row count Postgres does not try to foresee: with arrays it sized a plan
 * by each call's values and planned the statement again on every call.
 */
export function sentMembers(list: Expression<unknown>) {
  return sql`jsonb_to_recordset(${list}) as m(user_id uuid, display text)`;
}

/**
 * The JSON list of members sentMembers reads, in lock order: two statements adding the same members
 * to a group take their rows in the same order.
 */
export function memberValues(members: readonly NewMember[]): { user_id: string; display: string | null }[] {
  return inLockOrder(
    members.map((m) => ({ user_id: m.userId, display: m.display ?? null })),
    (m) => m.user_id,
  );
}

/**
 * A `from` item that takes the organization's (`org`) turn on roles: the shared lock its access
 * triggers take (scim_roles_share), before the statement locks any user. A mapping change holds that
 * lock while it locks users, so it never waits for a statement that waits for it.
 */
export const rolesTurn = () => sql`scim_roles_share(array[${param('org')}::uuid])`.as('roles_turn');

/**
 * `from` the members in the list that are users of the organization (`org`) not deprovisioned, rows
 * `m` joined to `users`. The users are locked for share, which an update of them waits for: a
 * deprovisioning of one of them waits for the write (and then takes the new member row away), or the
 * write for it (and then finds the user gone). The roles turn comes first (rolesTurn).
 */
function memberUsers(list: Expression<unknown>) {
  return sql`from ${rolesTurn()} cross join ${sentMembers(list)} join users on users.org_id = ${param('org')}
    and users.id = m.user_id and users.deprovisioned_at is null for share of users`;
}

/** Whether every member in the list is a user of the organization (`org`) that is not deprovisioned. */
export function membersAreUsers(list: Expression<unknown>) {
  return sql<SqlBool>`(select count(*) from (select ${memberUsers(list)}) as locked) = jsonb_array_length(${list})`;
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
export const keepMemberTakingDisplay = (conflict: OnConflictBuilder<any, any>) =>
  conflict
    .columns(['org_id', 'group_id', 'user_id'])
    .doUpdateSet({ display: sql`excluded.display` })
    .where(
      sql<SqlBool>`excluded.display is not null and group_members.display is distinct from excluded.display`,
    );

const addMembersStatement = statement((db) =>
  db
    .insertInto('group_members')
    .columns(['org_id', 'group_id', 'user_id', 'display', 'created_at'])
    .expression(
      sql`select ${param('org')}::uuid, ${param('group')}::uuid, m.user_id, m.display, ${param('now')}::timestamptz
        ${memberUsers(sql`${param('members')}::jsonb`)}`,
    )
    .onConflict(keepMemberTakingDisplay),
);

/**
 * Adds members (keepMemberTakingDisplay), but those deprovisioned since they were found to be users
 * (memberUsers). Returns how many rows were added or changed.
 */
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
    members: JSON.stringify(memberValues(members)),
  });
  return Number(result.numAffectedRows ?? 0n);
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
