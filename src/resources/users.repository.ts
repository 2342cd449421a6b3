// SQL for one user at a time: create, read, write and remove, each with its audit entry (pages of
// users are in user-pages.repository.ts). Rows never leave these modules. Each statement is declared
// once (db/statement.ts) and run with its values by name.
import { type Kysely, type Selectable, sql, type UpdateObject } from 'kysely';
import type { AuditEntry } from '../audit/audit.js';
import {
  AUDIT_COLUMNS,
  auditArrays,
  auditRows,
  auditValues,
  auditWritten,
} from '../audit/audit.repository.js';
import { rethrowDuplicateKey } from '../db/constraints.js';
import { isUuid } from '../db/ids.js';
import { param, statement } from '../db/statement.js';
import type { DB, UsersTable } from '../db/tables.js';
import { countRows } from './counts.repository.js';
import type { StoredUser, UserGroup } from './users.js';
import type { ScimResource } from './validate.js';

export type UserRow = Pick<Selectable<UsersTable>, 'id' | 'data' | 'created_at' | 'updated_at'> & {
  groups?: UserGroup[];
  version?: string;
};

function rowToUser(row: UserRow): StoredUser {
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

/** The columns derived from the attributes, as parameters; userValues gives their values. */
const USER_COLUMNS = {
  user_name: param('user_name'),
  external_id: param<string | null>('external_id'),
  display_name: param<string | null>('display_name'),
  active: param<boolean>('active'),
  data: param('data'),
};

/** The columns the product reads directly, derived from the attributes. */
function userValues(attributes: ScimResource) {
  return {
    user_name: String(attributes.userName),
    external_id: typeof attributes.externalId === 'string' ? attributes.externalId : null,
    display_name: typeof attributes.displayName === 'string' ? attributes.displayName : null,
    active: attributes.active !== false,
    data: JSON.stringify(attributes),
  };
}

const NEW_USER = {
  org_id: param('org'),
  id: param('id'),
  ...USER_COLUMNS,
  created_at: param<Date>('now'),
  updated_at: param<Date>('now'),
};

// The insert returns only the id: the rest is what was just written, so reading it back (the data as
// JSON and both dates, parsed again) is work for nothing on both sides of the connection.
// The organization's count of users changes in the same statement.
const insertUserRow = statement((db) =>
  db
    .with('written', (w) => w.insertInto('users').values(NEW_USER).returning(['id', 'org_id']))
    .with('counted', countRows('users', 1))
    .selectFrom('written')
    .select('id'),
);

/** The user and its audit entry in one statement, so that one commits exactly when the other does. */
const insertUserAudited = statement((db) =>
  db
    .with('written', (w) => w.insertInto('users').values(NEW_USER).returning(['id', 'org_id']))
    .with('counted', countRows('users', 1))
    .with('audited', (w) => w.insertInto('audit_events').values(AUDIT_COLUMNS))
    .selectFrom('written')
    .select('id'),
);

/** Inserts a user, with the audit entry of its creation when given. Throws DuplicateKeyError. */
export async function insertUser(
  db: Kysely<DB>,
  orgId: string,
  id: string,
  attributes: ScimResource,
  now: Date,
  audit?: AuditEntry,
): Promise<StoredUser> {
  const values = { org: orgId, id, now, ...userValues(attributes) };
  await (audit
    ? insertUserAudited.run(db, { ...values, ...auditValues(audit, now) })
    : insertUserRow.run(db, values)
  ).catch(rethrowDuplicateKey);
  // A user this statement has just created belongs to no group yet.
  return { id, attributes, created: now, lastModified: now, groups: [] };
}

/** A user to create, and the entry of its creation when it has one. */
export interface NewUser {
  readonly id: string;
  readonly attributes: ScimResource;
  readonly at: Date;
  readonly audit?: AuditEntry | undefined;
}

/**
 * Users of one organization, their count and their creations' audit entries in one statement, from
 * one array parameter per column: what the concurrent creates of an organization share.
 */
const insertUsersStatement = statement((db) =>
  db
    .with('written', (w) =>
      w
        .insertInto('users')
        .columns([
          'org_id',
          'id',
          'user_name',
          'external_id',
          'display_name',
          'active',
          'data',
          'created_at',
          'updated_at',
        ])
        .expression(
          sql`select ${param('org')}::uuid, u.id, u.user_name, u.external_id, u.display_name, u.active,
              u.data::jsonb, u.at, u.at
            from unnest(${param('user_ids')}::uuid[], ${param('user_names')}::text[],
              ${param('external_ids')}::text[], ${param('display_names')}::text[],
              ${param('actives')}::boolean[], ${param('datas')}::text[], ${param('ats')}::timestamptz[])
              as u(id, user_name, external_id, display_name, active, data, at)`,
        )
        .returning(['id', 'org_id']),
    )
    .with('counted', countRows('users', 1))
    .with('audited', (w) =>
      w
        .insertInto('audit_events')
        .columns(['org_id', 'at', 'actor', 'action', 'resource_type', 'resource_id', 'status', 'request_id'])
        .expression(auditRows('audit_')),
    )
    .selectFrom('written')
    .select('id'),
);

/** Inserts users of one organization, with their audit entries, all or none. Throws DuplicateKeyError. */
export async function insertUsers(db: Kysely<DB>, orgId: string, users: readonly NewUser[]): Promise<void> {
  const values = users.map((u) => userValues(u.attributes));
  await insertUsersStatement
    .run(db, {
      org: orgId,
      user_ids: users.map((u) => u.id),
      user_names: values.map((v) => v.user_name),
      external_ids: values.map((v) => v.external_id),
      display_names: values.map((v) => v.display_name),
      actives: values.map((v) => v.active),
      datas: values.map((v) => v.data),
      ats: users.map((u) => u.at),
      ...auditArrays(
        users.flatMap((u) => (u.audit ? [{ entry: u.audit, at: u.at }] : [])),
        'audit_',
      ),
    })
    .catch(rethrowDuplicateKey);
}

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

/**
 * The replace of a user's attributes, its audit entry and the user as written with its groups, in
 * one statement. Given a `version` (from findUser), it writes only a row still at that version.
 */
const replaceUserStatement = statement((db) =>
  db
    .with('written', (w) =>
      w
        .updateTable('users')
        .set({ ...USER_COLUMNS, updated_at: param<Date>('now') })
        .where('org_id', '=', param('org'))
        .where('id', '=', param('id'))
        .where('deprovisioned_at', 'is', null)
        .where(sql<boolean>`xmin = coalesce(${param<string | null>('version')}::xid, xmin)`)
        .returning([...visible, 'org_id']),
    )
    .with('audited', auditWritten())
    .selectFrom('written as users')
    .select([...visible, groupsOfUser]),
);

/**
 * Writes the user's attributes with the audit entry of the write; undefined when no user has this
 * id, or (given `version`) its row has changed since. Throws DuplicateKeyError.
 */
export async function replaceUser(
  db: Kysely<DB>,
  orgId: string,
  id: string,
  attributes: ScimResource,
  now: Date,
  audit: AuditEntry,
  version?: string,
): Promise<StoredUser | undefined> {
  if (!isUuid(id)) return undefined;
  const values = { org: orgId, id, now, version: version ?? null, ...userValues(attributes) };
  const { rows } = await replaceUserStatement
    .run(db, { ...values, ...auditValues(audit, now) })
    .catch(rethrowDuplicateKey);
  return rows[0] && rowToUser(rows[0]);
}

/** The merge patch of a PATCH, as jsonb once for every place the statement reads it. */
const mergePatch = sql<Record<string, unknown>>`${param('patch')}::jsonb`;
const merged = sql<string>`scim_merge_patch(users.data, patch.p)`;
/** A column derived from an attribute, as userValues derives it: changed only if the patch names it. */
const derived = <T>(attribute: string, column: string, value: string) =>
  sql<T>`case when patch.p ? ${sql.lit(attribute)} then ${sql.raw(value)} else users.${sql.ref(column)} end`;

/**
 * A PATCH whose result does not depend on the stored user (patch.ts mergePatchOf), merged into the
 * row in one statement with its audit entry: no read first, and a concurrent write is merged into,
 * not overwritten (the SET reads the row version it updates). meta.lastModified moves only if the
 * merge changed something.
 */
const mergeIntoUserStatement = statement((db) =>
  db
    .with('patch', (w) => w.selectNoFrom(mergePatch.as('p')))
    .with('written', (w) =>
      w
        .updateTable('users')
        .from('patch')
        .set({
          data: merged,
          user_name: derived<string>('userName', 'user_name', "patch.p ->> 'userName'"),
          external_id: derived<string | null>('externalId', 'external_id', "patch.p ->> 'externalId'"),
          display_name: derived<string | null>('displayName', 'display_name', "patch.p ->> 'displayName'"),
          active: derived<boolean>('active', 'active', "patch.p -> 'active' <> 'false'::jsonb"),
          updated_at: sql<Date>`case when ${merged} = users.data then users.updated_at else ${param<Date>('now')} end`,
        })
        .where('users.org_id', '=', param('org'))
        .where('users.id', '=', param('id'))
        .where('users.deprovisioned_at', 'is', null)
        .returning(['users.id', 'users.data', 'users.created_at', 'users.updated_at', 'users.org_id']),
    )
    .with('audited', auditWritten())
    .selectFrom('written as users')
    .select([...visible, groupsOfUser]),
);

/**
 * Merges a PATCH's merge patch into the user, with the audit entry; undefined when no user has this
 * id. Throws DuplicateKeyError.
 */
export async function mergeIntoUser(
  db: Kysely<DB>,
  orgId: string,
  id: string,
  patch: Record<string, unknown>,
  now: Date,
  audit: AuditEntry,
): Promise<StoredUser | undefined> {
  if (!isUuid(id)) return undefined;
  const values = { org: orgId, id, now, patch: JSON.stringify(patch) };
  const { rows } = await mergeIntoUserStatement
    .run(db, { ...values, ...auditValues(audit, now) })
    .catch(rethrowDuplicateKey);
  return rows[0] && rowToUser(rows[0]);
}

/**
 * A deprovisioning update (`set`) in one statement with what goes with it: the organization's
 * count of users goes down by one, the user leaves every group (its row stays, so its memberships do
 * not go with it as a deleted row's do), and the audit entry is written.
 */
const deprovisioning = (set: UpdateObject<DB, 'users'>) =>
  statement((db) =>
    db
      .with('written', (w) =>
        w
          .updateTable('users')
          .set(set)
          .where('org_id', '=', param('org'))
          .where('id', '=', param('id'))
          .where('deprovisioned_at', 'is', null)
          .returning(['org_id', 'id']),
      )
      .with('counted', countRows('users', -1))
      .with('left', (w) =>
        w
          .deleteFrom('group_members')
          .where('org_id', '=', param('org'))
          .where('user_id', 'in', w.selectFrom('written').select('id')),
      )
      .with('audited', auditWritten())
      .selectFrom('written')
      .select('org_id'),
  );

const deactivateUser = deprovisioning({
  deprovisioned_at: param<Date>('now'),
  updated_at: param<Date>('now'),
  active: sql<boolean>`false`,
  data: sql<string>`jsonb_set(data, '{active}', 'false'::jsonb)`,
});
const anonymizeUser = deprovisioning({
  deprovisioned_at: param<Date>('now'),
  updated_at: param<Date>('now'),
  active: sql<boolean>`false`,
  user_name: sql<string>`'deprovisioned-' || id`,
  external_id: sql<null>`null`,
  display_name: sql<null>`null`,
  data: sql<string>`'{"active": false}'::jsonb`,
});

/**
 * Deprovisions a user without deleting the row, with its audit entry: the SCIM view no longer shows
 * it, its userName is free again, and the product keeps the record. `anonymize` also erases every
 * attribute: the row keeps only its id, its organization and its dates. Either way the user leaves
 * every group.
 */
export async function deprovisionUser(
  db: Kysely<DB>,
  orgId: string,
  id: string,
  mode: 'deactivate' | 'anonymize',
  now: Date,
  audit: AuditEntry,
): Promise<boolean> {
  if (!isUuid(id)) return false;
  const update = mode === 'anonymize' ? anonymizeUser : deactivateUser;
  const { rows } = await update.run(db, { org: orgId, id, now, ...auditValues(audit, now) });
  return rows.length > 0;
}

/** Deletes the user (its memberships go with the row) with its count and its audit entry. */
const deleteUserStatement = statement((db) =>
  db
    .with('written', (w) =>
      w
        .deleteFrom('users')
        .where('org_id', '=', param('org'))
        .where('id', '=', param('id'))
        .where('deprovisioned_at', 'is', null)
        .returning('org_id'),
    )
    .with('counted', countRows('users', -1))
    .with('audited', auditWritten())
    .selectFrom('written')
    .select('org_id'),
);

export async function deleteUser(
  db: Kysely<DB>,
  orgId: string,
  id: string,
  now: Date,
  audit: AuditEntry,
): Promise<boolean> {
  if (!isUuid(id)) return false;
  const { rows } = await deleteUserStatement.run(db, { org: orgId, id, ...auditValues(audit, now) });
  return rows.length > 0;
}
