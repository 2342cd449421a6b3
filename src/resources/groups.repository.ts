// SQL for groups and their members: the only module that builds queries on those tables; rows never
// leave it. Membership is one row per (group, user): adding or removing k members costs O(k) whatever
// the size of the group, and reading a group without its members never touches the member rows.
// Member ids travel as one array parameter: one statement text whatever their number, and no limit
// from the protocol's 65,535 parameters (a group of 20,000 members fits in one request).
import { type Kysely, type Selectable, type SqlBool, sql } from 'kysely';
import type { AuditEntry } from '../audit/audit.js';
import { auditValues, auditWritten } from '../audit/audit.repository.js';
import { isForeignKeyViolation, rethrowDuplicateKey } from '../db/constraints.js';
import { isUuid } from '../db/ids.js';
import { param, StatementCache, statement } from '../db/statement.js';
import type { DB, GroupsTable } from '../db/tables.js';
import { compileCondition, filterValues } from '../filter/compile.js';
import { conditionKey, type FilterPlan } from '../filter/plan.js';
import type { StorageMapping } from '../filter/storage.js';
import { COUNT_OF, countRows } from './counts.repository.js';
import type { NewMember, StoredGroup, StoredMember } from './groups.js';
import { collectPage, type ListQuery, type ListResult, listStatement, pageRows } from './list-query.js';
import type { ScimResource } from './validate.js';

const visible = ['id', 'data', 'created_at', 'updated_at'] as const;

function rowToGroup(row: Pick<Selectable<GroupsTable>, (typeof visible)[number]>): StoredGroup {
  return { id: row.id, attributes: row.data, created: row.created_at, lastModified: row.updated_at };
}

/** The unique index behind a group displayName's uniqueness (DuplicateKeyError names it). */
export const GROUP_NAME_INDEX = 'groups_org_display_name_ci';

export const groupStorage: StorageMapping = {
  table: 'groups',
  data: 'data',
  columns: {
    id: { column: 'id', type: 'uuid' },
    displayName: { column: 'display_name', type: 'text' },
    externalId: { column: 'external_id', type: 'text' },
    'meta.created': { column: 'created_at', type: 'timestamptz' },
    'meta.lastModified': { column: 'updated_at', type: 'timestamptz' },
    'meta.resourceType': { constant: 'Group' },
  },
  relations: {
    members: {
      rows: (owner) =>
        sql`group_members as gm where gm.org_id = ${sql.ref(`${owner}.org_id`)} and gm.group_id = ${sql.ref(`${owner}.id`)}`,
      subs: {
        value: { column: 'gm.user_id', type: 'uuid' },
        display: { column: 'gm.display', type: 'text' },
        type: { constant: 'User' },
      },
    },
  },
  indexedValues: new Set(),
};

const GROUP_COLUMNS = {
  display_name: param('display_name'),
  external_id: param<string | null>('external_id'),
  data: param('data'),
};

function groupValues(attributes: ScimResource) {
  return {
    display_name: String(attributes.displayName),
    external_id: typeof attributes.externalId === 'string' ? attributes.externalId : null,
    data: JSON.stringify(attributes),
  };
}

/**
 * A group with its members, its count and its audit entry, in one statement. The members sent are
 * checked in it: the group is written only if every one is a user of the organization that is not
 * deprovisioned.
 */
const insertGroupStatement = statement((db) =>
  db
    .with('sent', (w) =>
      w
        .selectFrom(
          sql<{
            user_id: string;
            display: string | null;
          }>`(select unnest(${param('users')}::uuid[]) as user_id,
          unnest(${param('displays')}::text[]) as display)`.as('sent'),
        )
        .selectAll(),
    )
    .with('valid', (w) =>
      w
        .selectFrom('sent')
        .innerJoin('users', (join) =>
          join
            .onRef('users.id', '=', 'sent.user_id')
            .on('users.org_id', '=', param('org'))
            .on('users.deprovisioned_at', 'is', null),
        )
        .select(['sent.user_id', 'sent.display']),
    )
    .with('written', (w) =>
      w
        .insertInto('groups')
        .columns(['org_id', 'id', 'display_name', 'external_id', 'data', 'created_at', 'updated_at'])
        .expression(
          sql`select ${param('org')}::uuid, ${param('id')}::uuid, ${param('display_name')}::text,
            ${param('external_id')}::text, ${param('data')}::jsonb, ${param('now')}::timestamptz,
            ${param('now')}::timestamptz
            where (select count(*) from valid) = (select count(*) from sent)`,
        )
        .returning([...visible, 'org_id']),
    )
    .with('joined', (w) =>
      w
        .insertInto('group_members')
        .columns(['org_id', 'group_id', 'user_id', 'display', 'created_at'])
        .expression(
          sql`select written.org_id, written.id, valid.user_id, valid.display, ${param('now')}::timestamptz
            from written cross join valid`,
        ),
    )
    .with('counted', countRows('groups', 1))
    .with('audited', auditWritten())
    .selectFrom('written')
    .select(visible),
);

/**
 * Writes the group, its members (distinct users) and the audit entry of its creation; undefined when a
 * member is not a user of the organization that is not deprovisioned (nothing is written then).
 * Throws DuplicateKeyError.
 */
export async function insertGroup(
  db: Kysely<DB>,
  orgId: string,
  id: string,
  attributes: ScimResource,
  members: readonly NewMember[],
  now: Date,
  audit: AuditEntry,
): Promise<StoredGroup | undefined> {
  const { rows } = await insertGroupStatement
    .run(db, {
      org: orgId,
      id,
      now,
      ...groupValues(attributes),
      users: members.map((m) => m.userId),
      displays: members.map((m) => m.display ?? null),
      ...auditValues(audit, now),
    })
    .catch(rethrowDuplicateKey);
  return rows[0] && rowToGroup(rows[0]);
}

const findGroupStatement = statement((db) =>
  db.selectFrom('groups').select(visible).where('org_id', '=', param('org')).where('id', '=', param('id')),
);
const findGroupForUpdate = statement((db) =>
  db
    .selectFrom('groups')
    .select(visible)
    .where('org_id', '=', param('org'))
    .where('id', '=', param('id'))
    .forUpdate(),
);

export async function findGroup(
  db: Kysely<DB>,
  orgId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<StoredGroup | undefined> {
  if (!isUuid(id)) return undefined;
  const find = options.forUpdate ? findGroupForUpdate : findGroupStatement;
  const row = (await find.run(db, { org: orgId, id })).rows[0];
  return row && rowToGroup(row);
}

const updateGroupStatement = statement((db) =>
  db
    .updateTable('groups')
    .set({ ...GROUP_COLUMNS, updated_at: param<Date>('now') })
    .where('org_id', '=', param('org'))
    .where('id', '=', param('id'))
    .returning(visible),
);
const touchGroup = statement((db) =>
  db
    .updateTable('groups')
    .set({ updated_at: param<Date>('now') })
    .where('org_id', '=', param('org'))
    .where('id', '=', param('id'))
    .returning(visible),
);

/** Writes the attributes (or only the time, when `attributes` is undefined). Throws DuplicateKeyError. */
export async function updateGroup(
  db: Kysely<DB>,
  orgId: string,
  id: string,
  attributes: ScimResource | undefined,
  now: Date,
): Promise<StoredGroup> {
  const { rows } = await (attributes
    ? updateGroupStatement.run(db, { org: orgId, id, now, ...groupValues(attributes) })
    : touchGroup.run(db, { org: orgId, id, now })
  ).catch(rethrowDuplicateKey);
  return rowToGroup(rows[0]!);
}

const deleteGroupStatement = statement((db) =>
  db
    .with('written', (w) =>
      w
        .deleteFrom('groups')
        .where('org_id', '=', param('org'))
        .where('id', '=', param('id'))
        .returning('org_id'),
    )
    .with('counted', countRows('groups', -1))
    .selectFrom('written')
    .select('org_id'),
);

export async function deleteGroup(db: Kysely<DB>, orgId: string, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  const { rows } = await deleteGroupStatement.run(db, { org: orgId, id });
  return rows.length > 0;
}

/** The organization's groups (its id in the parameter `org`) that match the filter. */
function matchingGroups(db: Kysely<DB>, query: ListQuery) {
  const base = db.selectFrom('groups').where('org_id', '=', param('org'));
  return query.filter ? base.where(compileCondition(query.filter.condition, groupStorage)) : base;
}

/** The statement of one page, in the direction it is read (tests EXPLAIN it). */
export function groupPageStatement(query: ListQuery) {
  return listStatement('groups', 'page', query, (db) =>
    pageRows(matchingGroups(db, query).select(visible), 'groups', query),
  );
}

export async function listGroups(
  db: Kysely<DB>,
  orgId: string,
  query: ListQuery,
): Promise<ListResult<StoredGroup>> {
  return collectPage(db, orgId, query, {
    table: 'groups',
    // Without a filter the total is the organization's count, kept by every create and removal.
    count: () =>
      query.filter
        ? listStatement('groups', 'count', query, (b) =>
            matchingGroups(b, query).select((eb) => eb.fn.countAll<string>().as('total')),
          )
        : COUNT_OF.groups,
    page: (read) => groupPageStatement(read),
    toItem: (row) => rowToGroup(row as Parameters<typeof rowToGroup>[0]),
  });
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

const addMembersStatement = statement((db) =>
  db
    .insertInto('group_members')
    .columns(['org_id', 'group_id', 'user_id', 'display', 'created_at'])
    .expression(
      sql`select ${param('org')}::uuid, ${param('group')}::uuid, m.user_id, m.display, ${param('now')}::timestamptz
        from unnest(${param('users')}::uuid[], ${param('displays')}::text[]) as m(user_id, display)`,
    )
    .onConflict((oc) =>
      oc
        .columns(['org_id', 'group_id', 'user_id'])
        .doUpdateSet({ display: (eb) => eb.ref('excluded.display') })
        .where(
          sql<SqlBool>`excluded.display is not null and group_members.display is distinct from excluded.display`,
        ),
    ),
);

/**
 * Adds members. One already there stays, taking the display sent with it if that differs (Okta's
 * full push re-sends displays). Returns how many rows were added or changed.
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
    users: members.map((m) => m.userId),
    displays: members.map((m) => m.display ?? null),
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
const changeMembersStatement = statement((db) =>
  db
    .with('target', (w) =>
      w.selectFrom('groups').select('id').where('org_id', '=', param('org')).where('id', '=', param('group')),
    )
    .with('sent', (w) =>
      w
        .selectFrom(
          sql<{
            user_id: string;
            display: string | null;
          }>`(select unnest(${param('users')}::uuid[]) as user_id,
            unnest(${param('displays')}::text[]) as display)`.as('sent'),
        )
        .selectAll(),
    )
    .with('valid', (w) =>
      w
        .selectFrom('sent')
        .innerJoin('users', (join) =>
          join
            .onRef('users.id', '=', 'sent.user_id')
            .on('users.org_id', '=', param('org'))
            .on('users.deprovisioned_at', 'is', null),
        )
        .select(['sent.user_id', 'sent.display']),
    )
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
        .where('group_id', '=', param('group'))
        .where(sql<SqlBool>`exists (select 1 from written)`)
        .where(
          sql<SqlBool>`case when ${param<boolean>('remove_all')}::boolean
            then user_id <> all(${param('users')}::uuid[])
            else user_id = any(${param('removes')}::uuid[]) end`,
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
        .onConflict((oc) =>
          oc
            .columns(['org_id', 'group_id', 'user_id'])
            .doUpdateSet({ display: (eb) => eb.ref('excluded.display') })
            .where(
              sql<SqlBool>`excluded.display is not null and group_members.display is distinct from excluded.display`,
            ),
        )
        .returning('user_id'),
    )
    .with('touched', (w) =>
      w
        .updateTable('groups')
        .set({ updated_at: param<Date>('now') })
        .where('org_id', '=', param('org'))
        .where('id', '=', param('group'))
        .where(sql<SqlBool>`(exists (select 1 from removed) or exists (select 1 from added))`)
        .returning('id'),
    )
    .with('audited', auditWritten())
    .selectNoFrom([
      sql<string>`(select count(*) from target)`.as('found'),
      sql<string>`(select count(*) from written)`.as('applied'),
      sql<string>`(select count(*) from touched)`.as('changed'),
    ]),
);

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
  const { rows } = await changeMembersStatement
    .run(db, {
      org: orgId,
      group: groupId,
      now,
      remove_all: changes.removeAll,
      removes: changes.removes.filter(isUuid).map((id) => id.toLowerCase()),
      users: changes.adds.map((m) => m.userId),
      displays: changes.adds.map((m) => m.display ?? null),
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
