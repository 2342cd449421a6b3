// SQL for pages of users: how users are stored for the filter planner, and one page of a list with
// its total. A page returns each user's stored attributes as jsonb's text, which a response can carry
// as it is (users.service.ts renderUserJson).
import { type Compilable, type Kysely, sql } from 'kysely';
import { type Statement, unestimatedParam } from '../db/statement.js';
import type { DB } from '../db/tables.js';
import { compileCondition } from '../filter/compile.js';
import type { StorageMapping } from '../filter/storage.js';
import { ENTERPRISE_USER_SCHEMA_URN } from '../schema/registry.js';
import { COUNT_OF } from './counts.repository.js';
import {
  collectPage,
  decoratePage,
  type ListQuery,
  type ListResult,
  listStatement,
  type PositionRow,
  pageRows,
  positionAt,
} from './list-query.js';
import type { PagePositions } from './page-positions.js';
import type { StoredUser } from './users.js';
import { groupsOfUser, type UserRow, visible } from './users.repository.js';
import type { ScimResource } from './validate.js';

/** A row of a page: its attributes as JSON text (a page passes them through unparsed). */
type PagedUserRow = Omit<UserRow, 'data'> & { data: string; sort_value?: string | null };

/** A user of a page: its attributes parsed only if something reads them. */
function pagedRowToUser(row: PagedUserRow): StoredUser {
  let attributes: ScimResource | undefined;
  return {
    id: row.id,
    get attributes() {
      attributes ??= JSON.parse(row.data) as ScimResource;
      return attributes;
    },
    json: row.data,
    created: row.created_at,
    lastModified: row.updated_at,
    groups: row.groups,
  };
}

/**
 * A page's `data`, as jsonb's text (which a page returns as it is), computed on the rows the page
 * keeps: in the paging query itself Postgres would compute it for every row OFFSET skips.
 */
const dataAsText = sql<string>`users.data::text`.as('data');

/** How users are stored, for the filter planner: columns first, the rest in `data`. */
export const userStorage: StorageMapping = {
  table: 'users',
  data: 'data',
  columns: {
    id: { column: 'id', type: 'uuid' },
    userName: { column: 'user_name', type: 'text' },
    externalId: { column: 'external_id', type: 'text' },
    displayName: { column: 'display_name', type: 'text' },
    active: { column: 'active', type: 'boolean' },
    'meta.created': { column: 'created_at', type: 'timestamptz' },
    'meta.lastModified': { column: 'updated_at', type: 'timestamptz' },
    'meta.resourceType': { constant: 'User' },
  },
  relations: {
    // The readOnly `groups` of a user are its membership rows (RFC 7643 §4.1.2).
    groups: {
      rows: (owner) =>
        sql`group_members as gm join groups as g on g.org_id = gm.org_id and g.id = gm.group_id
            where gm.org_id = ${sql.ref(`${owner}.org_id`)} and gm.user_id = ${sql.ref(`${owner}.id`)}`,
      subs: {
        value: { column: 'gm.group_id', type: 'uuid' },
        display: { column: 'g.display_name', type: 'text' },
        type: { constant: 'direct' },
      },
    },
  },
  indexedValues: new Map([['emails', 'email_values']]),
  extensionValues: { column: 'extension_values', unindexed: new Set([ENTERPRISE_USER_SCHEMA_URN]) },
};

/** The organization's users (its id in the parameter `org`) that match the filter. */
function matchingUsers(db: Kysely<DB>, query: ListQuery) {
  const base = db
    .selectFrom('users')
    .where('org_id', '=', unestimatedParam('org', 'uuid'))
    .where('deprovisioned_at', 'is', null);
  return query.filter ? base.where(compileCondition(query.filter.condition, userStorage)) : base;
}

/**
 * The statement of one page, in the direction it is read (tests EXPLAIN it), with each user's groups
 * when `groups` says the response carries them.
 */
export function userPageStatement(query: ListQuery, groups = false): Statement<PagedUserRow> {
  return listStatement<PagedUserRow>('users', groups ? 'page with groups' : 'page', query, (db) => {
    const paged = pageRows(matchingUsers(db, query).select([...visible, 'org_id']), 'users', query);
    const columns = groups ? [dataAsText, groupsOfUser] : [dataAsText];
    const kept = ['id', 'created_at', 'updated_at'];
    return decoratePage(db, paged, 'users', query, kept, columns) as Compilable<PagedUserRow>;
  });
}

/** The user at the offset of a page of one row, by its sort key and id (list-query.ts positionAt). */
export function userPositionStatement(query: ListQuery): Statement<PositionRow> {
  return listStatement<PositionRow>('users', 'position', query, (db) =>
    positionAt(db, matchingUsers(db, query), 'users', query),
  );
}

/** One page of the organization's users that match the query, and how many match in all. */
export async function listUsers(
  db: Kysely<DB>,
  orgId: string,
  query: ListQuery,
  options: { groups: boolean; positions?: PagePositions | undefined },
): Promise<ListResult<StoredUser>> {
  return collectPage(db, orgId, query, {
    table: 'users',
    // Without a filter the total is the organization's count, kept by every create and removal.
    count: () =>
      query.filter
        ? listStatement('users', 'count', query, (b) =>
            matchingUsers(b, query).select((eb) => eb.fn.countAll<string>().as('total')),
          )
        : COUNT_OF.users,
    page: (read) => userPageStatement(read, options.groups),
    toItem: pagedRowToUser,
    positioning: options.positions && { positions: options.positions, positionAt: userPositionStatement },
  });
}
