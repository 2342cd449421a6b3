// SQL for reading one user, and the row shapes the writes of users share (their writes are in
// user-writes.repository.ts, pages of users in user-pages.repository.ts). Rows never leave these
// modules. Each statement is declared once (db/statement.ts) and run with its values by name.
import { type Kysely, type Selectable, sql } from 'kysely';
import { isUuid } from '../db/ids.js';
import { param, statement } from '../db/statement.js';
import type { DB, UsersTable } from '../db/tables.js';
import type { StoredUser, UserGroup } from './users.js';

export type UserRow = Pick<Selectable<UsersTable>, 'id' | 'data' | 'created_at' | 'updated_at'> & {
  groups?: UserGroup[];
  version?: string;
};

export function rowToUser(row: UserRow): StoredUser {
  return {
    id: row.id,
    attributes: row.data,
    created: row.created_at,
    lastModified: row.updated_at,
    groups: row.groups,
    ...(row.version === undefined ? {} : { version: row.version }),
  };
}

/** The unique index behind userName's uniqueness (DuplicateKeyError names it). */
export const USER_NAME_INDEX = 'users_org_user_name_ci';

/**
 * The user's memberships as one JSON array, a correlated subquery on the membership index, so a
 * user and its groups come back in one round trip, in a lookup and in a page of a hundred alike.
 */
export const groupsOfUser = sql<UserGroup[]>`(
  select coalesce(
    json_agg(json_build_object('groupId', g.id, 'displayName', g.display_name) order by g.display_name, g.id),
    '[]'::json)
  from group_members as gm join groups as g on g.org_id = gm.org_id and g.id = gm.group_id
  where gm.org_id = users.org_id and gm.user_id = users.id)`.as('groups');

export const visible = ['id', 'data', 'created_at', 'updated_at'] as const;
/** The row's version: the transaction that wrote it, which every write changes. */
const rowVersion = sql<string>`users.xmin::text`.as('version');
/** What reading or writing one user returns: the row, its groups and its version. */
const withGroups = [...visible, groupsOfUser, rowVersion] as const;

const findUserStatement = statement((db) =>
  db
    .selectFrom('users')
    .select(withGroups)
    .where('org_id', '=', param('org'))
    .where('id', '=', param('id'))
    .where('deprovisioned_at', 'is', null),
);

/** The user without its groups: for a write, whose statement returns them. */
const findUserRowStatement = statement((db) =>
  db
    .selectFrom('users')
    .select([...visible, rowVersion])
    .where('org_id', '=', param('org'))
    .where('id', '=', param('id'))
    .where('deprovisioned_at', 'is', null),
);

/** The user and its version, with its groups unless `groups` is false (`groups` is then undefined). */
export async function findUser(
  db: Kysely<DB>,
  orgId: string,
  id: string,
  options: { groups?: boolean } = {},
): Promise<StoredUser | undefined> {
  if (!isUuid(id)) return undefined;
  const find = options.groups === false ? findUserRowStatement : findUserStatement;
  const row = (await find.run(db, { org: orgId, id })).rows[0];
  return row && rowToUser(row);
}
