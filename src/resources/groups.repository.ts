// SQL for groups: the only module that builds queries on the groups table; rows never leave it.
// Reading a group without its members never touches the member rows (group-members.repository.ts).
import { type Kysely, type Selectable, sql } from 'kysely';
import type { AuditEntry } from '../audit/audit.js';
import { AUDIT_BATCH_COLUMNS, auditBatchWritten, auditValues } from '../audit/audit.repository.js';
import { MEMBER_USER_KEY, rethrowDuplicateKey, violatedForeignKey } from '../db/constraints.js';
import { isUuid } from '../db/ids.js';
import { param, type Statement, statement, unestimatedParam } from '../db/statement.js';
import type { DB, GroupsTable } from '../db/tables.js';
import { batchRows, WriteBatches } from '../db/write-batches.js';
import { compileCondition } from '../filter/compile.js';
import { COUNT_OF, countRows } from './counts.repository.js';
import { membersAreUsers, memberValues, sentMembers } from './group-members.repository.js';
import type { NewMember, StoredGroup } from './groups.js';
import { groupLastModified, groupStorage } from './groups.storage.js';
import {
  collectPage,
  type ListQuery,
  type ListResult,
  listStatement,
  type PositionRow,
  pageRows,
  positionAt,
} from './list-query.js';
import type { PagePositions } from './page-positions.js';
import type { ScimResource } from './validate.js';

const visible = ['id', 'data', 'created_at', 'updated_at'] as const;
/** What a read returns of a group: its columns, and its meta.lastModified (as `updated_at`). */
const read = [...visible.slice(0, 3), groupLastModified('groups').as('updated_at')] as const;

function rowToGroup(row: Pick<Selectable<GroupsTable>, (typeof visible)[number]>): StoredGroup {
  return { id: row.id, attributes: row.data, created: row.created_at, lastModified: row.updated_at };
}

/** The unique index behind a group displayName's uniqueness (DuplicateKeyError names it). */
export const GROUP_NAME_INDEX = 'groups_org_display_name_ci';

const GROUP_COLUMNS = {
  display_name: param('display_name'),
  external_id: param<string | null>('external_id'),
  data: param('data'),
};

/** The columns the product reads directly, derived from the attributes. */
function groupValues(attributes: ScimResource) {
  return {
    display_name: String(attributes.displayName),
    external_id: typeof attributes.externalId === 'string' ? attributes.externalId : null,
    data: attributes,
  };
}

/** A group to create, with its members and the audit entry of its creation. */
interface NewGroup {
  readonly id: string;
  readonly attributes: ScimResource;
  readonly members: readonly NewMember[];
  readonly at: Date;
  readonly audit: AuditEntry;
}

/**
 * A batch of groups with their members, the count and their audit entries, in one statement. A
 * group is written only if every member sent with it is a user of the organization that is not
 * deprovisioned (membersAreUsers).
 */
const insertGroupsStatement = statement((db) =>
  db
    .with('batch', (w) =>
      w
        .selectFrom(
          batchRows(
            `n integer, id uuid, display_name text, external_id text, data jsonb, members jsonb, at timestamptz, ${AUDIT_BATCH_COLUMNS}`,
          ),
        )
        .selectAll(),
    )
    .with('written', (w) =>
      w
        .insertInto('groups')
        .columns(['org_id', 'id', 'display_name', 'external_id', 'data', 'created_at', 'updated_at'])
        .expression(
          sql`select ${param('org')}::uuid, id, display_name, external_id, data, at, at
            from batch where ${membersAreUsers(sql.ref('batch.members'))} order by n`,
        )
        .returning([...visible, 'org_id']),
    )
    .with('joined', (w) =>
      w
        .insertInto('group_members')
        .columns(['org_id', 'group_id', 'user_id', 'display', 'created_at'])
        .expression(
          sql`select written.org_id, written.id, m.user_id, m.display, written.created_at
            from written join batch on batch.id = written.id cross join lateral ${sentMembers(sql.ref('batch.members'))}`,
        ),
    )
    .with('counted', countRows('groups', 1))
    .with('audited', auditBatchWritten('id'))
    .selectFrom('written')
    .select(visible),
);

const createsOf = () =>
  new WriteBatches<NewGroup, StoredGroup | undefined>({
    row: (g) => ({
      id: g.id,
      ...groupValues(g.attributes),
      members: memberValues(g.members),
      at: g.at,
      ...auditValues(g.audit, g.at),
    }),
    writeAll: async (db, orgId, groups, batch) => {
      const result = await insertGroupsStatement.run(db, { org: orgId, batch }).catch((error: unknown) => {
        // A member was deleted while the statement ran: as if it had not been a user.
        if (groups.length === 1 && violatedForeignKey(error) === MEMBER_USER_KEY) return undefined;
        return rethrowDuplicateKey(error);
      });
      if (!result) return [undefined];
      const { rows } = result;
      const written = new Map(rows.map((row) => [row.id, rowToGroup(row)]));
      return groups.map((g) => written.get(g.id));
    },
    weight: (g) => 1 + g.members.length,
  });

/** The batched writes of groups (db/write-batches.ts). One instance per process (resource-writes.ts). */
export class GroupWrites {
  readonly #creates = createsOf();

  /**
   * Writes the group, its members (distinct users) and the audit entry of its creation; undefined
   * when a member is not a user of the organization that is not deprovisioned (nothing is written
   * then). Concurrent creates of an organization's groups share a statement. Throws DuplicateKeyError.
   */
  insert(
    db: Kysely<DB>,
    orgId: string,
    id: string,
    attributes: ScimResource,
    members: readonly NewMember[],
    now: Date,
    audit: AuditEntry,
  ): Promise<StoredGroup | undefined> {
    return this.#creates.write(db, orgId, { id, attributes, members, at: now, audit });
  }
}

const findGroupStatement = statement((db) =>
  db.selectFrom('groups').select(read).where('org_id', '=', param('org')).where('id', '=', param('id')),
);
const findGroupForUpdate = statement((db) =>
  db
    .selectFrom('groups')
    .select(read)
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
    .returning(read),
);
const touchGroup = statement((db) =>
  db
    .updateTable('groups')
    .set({ updated_at: param<Date>('now') })
    .where('org_id', '=', param('org'))
    .where('id', '=', param('id'))
    .returning(read),
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
  const base = db.selectFrom('groups').where('org_id', '=', unestimatedParam('org', 'uuid'));
  return query.filter ? base.where(compileCondition(query.filter.condition, groupStorage)) : base;
}

/** The statement of one page, in the direction it is read (tests EXPLAIN it). */
export function groupPageStatement(query: ListQuery) {
  return listStatement('groups', 'page', query, (db) =>
    pageRows(matchingGroups(db, query).select(read), 'groups', query),
  );
}

/** The group at the offset of a page of one row, by its sort key and id (list-query.ts positionAt). */
export function groupPositionStatement(query: ListQuery): Statement<PositionRow> {
  return listStatement<PositionRow>('groups', 'position', query, (db) =>
    positionAt(db, matchingGroups(db, query), 'groups', query),
  );
}

export async function listGroups(
  db: Kysely<DB>,
  orgId: string,
  query: ListQuery,
  positions?: PagePositions,
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
    positioning: positions && { positions, positionAt: groupPositionStatement },
  });
}
