// SQL for groups and their members. Membership is one row per (group, user): adding or removing k
// members costs O(k) whatever the size of the group, and reading a group without its members never
// touches the member rows.
import { type Kysely, type Selectable, type SqlBool, sql } from 'kysely';
import { isUuid } from '../db/ids.js';
import { fill, shapes, slot } from '../db/shapes.js';
import type { DB, GroupsTable } from '../db/tables.js';
import type { CompiledFilter } from '../filter/compile.js';
import type { StorageMapping } from '../filter/storage.js';
import { UniquenessError } from '../http/scim-errors.js';
import type { ListQuery, ListResult } from './listing.js';
import { collectPage, compiledList, pageRows } from './page.repository.js';
import type { ScimResource } from './validate.js';

export interface StoredGroup {
  readonly id: string;
  /** Every attribute but members. */
  readonly attributes: ScimResource;
  readonly created: Date;
  readonly lastModified: Date;
}

export interface StoredMember {
  readonly userId: string;
  /** What the client sent as the member's display, if anything. */
  readonly display: string | null;
  readonly userDisplayName: string | null;
  readonly userName: string;
}

export interface NewMember {
  readonly userId: string;
  readonly display?: string | undefined;
}

const visible = ['id', 'data', 'created_at', 'updated_at'] as const;

function rowToGroup(row: Pick<Selectable<GroupsTable>, (typeof visible)[number]>): StoredGroup {
  return { id: row.id, attributes: row.data, created: row.created_at, lastModified: row.updated_at };
}

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

function columns(attributes: ScimResource) {
  return {
    display_name: String(attributes.displayName),
    external_id: typeof attributes.externalId === 'string' ? attributes.externalId : null,
    data: JSON.stringify(attributes),
  };
}

function rethrowUniqueness(error: unknown): never {
  const e = error as { code?: string; constraint?: string };
  if (e.code === '23505' && e.constraint === 'groups_org_display_name_ci') {
    throw new UniquenessError('A group with this displayName already exists in the organization');
  }
  throw error;
}

export async function insertGroup(
  db: Kysely<DB>,
  orgId: string,
  id: string,
  attributes: ScimResource,
  now: Date,
): Promise<StoredGroup> {
  const row = await db
    .insertInto('groups')
    .values({ org_id: orgId, id, ...columns(attributes), created_at: now, updated_at: now })
    .returning(visible)
    .executeTakeFirstOrThrow()
    .catch(rethrowUniqueness);
  return rowToGroup(row);
}

export async function findGroup(
  db: Kysely<DB>,
  orgId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<StoredGroup | undefined> {
  if (!isUuid(id)) return undefined;
  const forUpdate = options.forUpdate === true;
  const query = shapes.compile(`groups.find forUpdate=${forUpdate}`, { org: orgId, id }, () => {
    const read = db
      .selectFrom('groups')
      .select(visible)
      .where('org_id', '=', slot('org'))
      .where('id', '=', slot('id'));
    return forUpdate ? read.forUpdate() : read;
  });
  const row = (await db.executeQuery(query)).rows[0];
  return row && rowToGroup(row);
}

/** Writes the attributes (or only the time, when `attributes` is undefined). */
export async function updateGroup(
  db: Kysely<DB>,
  orgId: string,
  id: string,
  attributes: ScimResource | undefined,
  now: Date,
): Promise<StoredGroup> {
  const row = await db
    .updateTable('groups')
    .set({ ...(attributes ? columns(attributes) : {}), updated_at: now })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .returning(visible)
    .executeTakeFirstOrThrow()
    .catch(rethrowUniqueness);
  return rowToGroup(row);
}

export async function deleteGroup(db: Kysely<DB>, orgId: string, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  const result = await db
    .deleteFrom('groups')
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** The organization's groups (its id in the slot `org`) that match the filter. */
function matchingGroups(db: Kysely<DB>, query: ListQuery) {
  const base = db.selectFrom('groups').where('org_id', '=', slot('org'));
  return query.filter ? base.where(query.filter.where()) : base;
}

/** The rows of one page, in the direction they are read (tests EXPLAIN it). */
export function groupPageQuery(db: Kysely<DB>, orgId: string, query: ListQuery) {
  return compiledList('groups', orgId, query, 'page', () =>
    pageRows(matchingGroups(db, query).select(visible), 'groups', query),
  );
}

export async function listGroups(
  db: Kysely<DB>,
  orgId: string,
  query: ListQuery,
): Promise<ListResult<StoredGroup>> {
  return collectPage(
    db,
    query,
    () =>
      compiledList('groups', orgId, query, 'count', () =>
        matchingGroups(db, query).select((eb) => eb.fn.countAll<string>().as('total')),
      ),
    () => groupPageQuery(db, orgId, query),
    rowToGroup,
  );
}

/** The members of some groups, with what is needed to render them. */
export async function listMembers(
  db: Kysely<DB>,
  orgId: string,
  groupIds: readonly string[],
): Promise<Map<string, StoredMember[]>> {
  const out = new Map<string, StoredMember[]>(groupIds.map((id) => [id, []]));
  if (groupIds.length === 0) return out;
  const rows = await db
    .selectFrom('group_members as gm')
    .innerJoin('users as u', (j) => j.onRef('u.org_id', '=', 'gm.org_id').onRef('u.id', '=', 'gm.user_id'))
    .select(['gm.group_id', 'gm.user_id', 'gm.display', 'u.display_name', 'u.user_name'])
    .where('gm.org_id', '=', orgId)
    .where('gm.group_id', 'in', groupIds)
    .orderBy('gm.group_id')
    .orderBy('gm.created_at')
    .orderBy('gm.user_id')
    .execute();
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

/** Which of these ids are users of the organization that are not deprovisioned. */
export async function findMemberCandidates(
  db: Kysely<DB>,
  orgId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  const uuids = ids.filter(isUuid).map((id) => id.toLowerCase());
  if (uuids.length === 0) return new Set();
  const rows = await db
    .selectFrom('users')
    .select('id')
    .where('org_id', '=', orgId)
    .where('id', 'in', uuids)
    .where('deprovisioned_at', 'is', null)
    .execute();
  return new Set(rows.map((r) => r.id));
}

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
  const result = await db
    .insertInto('group_members')
    .values(
      members.map((m) => ({
        org_id: orgId,
        group_id: groupId,
        user_id: m.userId,
        display: m.display ?? null,
        created_at: now,
      })),
    )
    .onConflict((oc) =>
      oc
        .columns(['org_id', 'group_id', 'user_id'])
        .doUpdateSet({ display: (eb) => eb.ref('excluded.display') })
        .where(
          sql<SqlBool>`excluded.display is not null and group_members.display is distinct from excluded.display`,
        ),
    )
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n);
}

/** Removes the members these ids name (all of them when `ids` is undefined); returns how many went. */
export async function removeMembers(
  db: Kysely<DB>,
  orgId: string,
  groupId: string,
  ids: readonly string[] | undefined,
  filter?: CompiledFilter,
): Promise<number> {
  let query = db
    .deleteFrom('group_members as gm')
    .where('gm.org_id', '=', orgId)
    .where('gm.group_id', '=', groupId);
  if (ids) {
    const uuids = ids.filter(isUuid).map((id) => id.toLowerCase());
    if (uuids.length === 0) return 0;
    query = query.where('gm.user_id', 'in', uuids);
  }
  if (filter) query = query.where(filter.where());
  const result = await db.executeQuery(fill(query.compile(), filter?.values ?? {}));
  return Number(result.numAffectedRows ?? 0);
}

/** Makes the member set exactly `members`: removes the others, adds the new. */
export async function replaceMembers(
  db: Kysely<DB>,
  orgId: string,
  groupId: string,
  members: readonly NewMember[],
  now: Date,
): Promise<number> {
  let query = db.deleteFrom('group_members').where('org_id', '=', orgId).where('group_id', '=', groupId);
  if (members.length > 0)
    query = query.where(
      'user_id',
      'not in',
      members.map((m) => m.userId),
    );
  const removed = Number((await query.executeTakeFirst()).numDeletedRows);
  return removed + (await addMembers(db, orgId, groupId, members, now));
}

/** Takes a user out of every group (deprovisioning keeps the user row but ends its memberships). */
export async function removeFromAllGroups(db: Kysely<DB>, orgId: string, userId: string): Promise<number> {
  const result = await db
    .deleteFrom('group_members')
    .where('org_id', '=', orgId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
