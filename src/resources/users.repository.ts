// SQL for users. The only module that builds queries on the users table; rows never leave it.
import { type CompiledQuery, type Kysely, type QueryCreator, type Selectable, sql } from 'kysely';
import type { AuditRow } from '../audit/audit.js';
import { isUuid } from '../db/ids.js';
import { shapes, slot, slots, twoRows } from '../db/shapes.js';
import type { DB, UsersTable } from '../db/tables.js';
import type { StorageMapping } from '../filter/storage.js';
import { UniquenessError } from '../http/scim-errors.js';
import type { ListQuery, ListResult } from './listing.js';
import { collectPage, compiledList, decoratePage, pageRows } from './page.repository.js';
import type { ScimResource } from './validate.js';

/** A group the user belongs to (RFC 7643 §4.1.2 `groups`). */
export interface UserGroup {
  readonly groupId: string;
  readonly displayName: string;
}

export interface StoredUser {
  readonly id: string;
  readonly attributes: ScimResource;
  readonly created: Date;
  readonly lastModified: Date;
  /** The user's groups in display order, read in the same statement; undefined when not asked for. */
  readonly groups: readonly UserGroup[] | undefined;
}

type PagedUserRow = UserRow & { sort_value?: string | null };

type UserRow = Pick<Selectable<UsersTable>, 'id' | 'data' | 'created_at' | 'updated_at'> & {
  groups?: UserGroup[];
};

function rowToUser(row: UserRow): StoredUser {
  return {
    id: row.id,
    attributes: row.data,
    created: row.created_at,
    lastModified: row.updated_at,
    groups: row.groups,
  };
}

/**
 * The user's memberships as one JSON array, a correlated subquery on the membership index, so a
 * user and its groups come back in one round trip, in a lookup and in a page of a hundred alike.
 */
const groupsOfUser = sql<UserGroup[]>`(
  select coalesce(
    json_agg(json_build_object('groupId', g.id, 'displayName', g.display_name) order by g.display_name, g.id),
    '[]'::json)
  from group_members as gm join groups as g on g.org_id = gm.org_id and g.id = gm.group_id
  where gm.org_id = users.org_id and gm.user_id = users.id)`.as('groups');

/** The columns the product reads directly, derived from the attributes. */
function columns(attributes: ScimResource) {
  return {
    user_name: String(attributes.userName),
    external_id: typeof attributes.externalId === 'string' ? attributes.externalId : null,
    display_name: typeof attributes.displayName === 'string' ? attributes.displayName : null,
    active: attributes.active !== false,
    data: JSON.stringify(attributes),
  };
}

function rethrowUniqueness(error: unknown): never {
  const e = error as { code?: string; constraint?: string };
  if (e.code === '23505' && e.constraint === 'users_org_user_name_ci') {
    throw new UniquenessError('A user with this userName already exists in the organization');
  }
  throw error;
}

const visible = ['id', 'data', 'created_at', 'updated_at'] as const;
/** The audit row's slots in the statement that also inserts the user. */
const AUDIT_SLOTS = 'audit.';
/** What reading one user returns: the row and its groups. */
const withGroups = [...visible, groupsOfUser] as const;

export async function insertUser(
  db: Kysely<DB>,
  orgId: string,
  id: string,
  attributes: ScimResource,
  now: Date,
  audit?: AuditRow,
): Promise<StoredUser> {
  const row = { org_id: orgId, id, ...columns(attributes), created_at: now, updated_at: now };
  // Returns only the id: the rest is what was just written, so reading it back (the data as JSON and
  // both dates, parsed again) is work for nothing on both sides of the connection.
  const insertRow = (into: QueryCreator<DB>) => into.insertInto('users').values(slots(row)).returning('id');
  // With its audit entry: both rows in one statement, so one commits exactly when the other does.
  const insert = audit
    ? shapes.compile('users.insert audited', twoRows(row, audit, AUDIT_SLOTS), () =>
        db
          .with('inserted', insertRow)
          .with('audited', (w) => w.insertInto('audit_events').values(slots(audit, AUDIT_SLOTS)))
          .selectFrom('inserted')
          .selectAll(),
      )
    : shapes.compile('users.insert', row, () => insertRow(db));
  await db.executeQuery(insert).catch(rethrowUniqueness);
  // A user this transaction has just created belongs to no group yet.
  return { id, attributes, created: now, lastModified: now, groups: [] };
}

export async function findUser(
  db: Kysely<DB>,
  orgId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<StoredUser | undefined> {
  if (!isUuid(id)) return undefined;
  const forUpdate = options.forUpdate === true;
  const query = shapes.compile(`users.find forUpdate=${forUpdate}`, { org: orgId, id }, () => {
    const read = db
      .selectFrom('users')
      .select(withGroups)
      .where('org_id', '=', slot('org'))
      .where('id', '=', slot('id'))
      .where('deprovisioned_at', 'is', null);
    return forUpdate ? read.forUpdate() : read;
  });
  const row = (await db.executeQuery(query)).rows[0];
  return row && rowToUser(row);
}

/** Writes the user's attributes; its groups are not read again (the caller's locked read has them). */
export async function replaceUser(
  db: Kysely<DB>,
  orgId: string,
  id: string,
  attributes: ScimResource,
  now: Date,
): Promise<StoredUser | undefined> {
  const set = { ...columns(attributes), updated_at: now };
  const update = shapes.compile('users.replace', { ...set, org: orgId, id }, () =>
    db
      .updateTable('users')
      .set(slots(set))
      .where('org_id', '=', slot('org'))
      .where('id', '=', slot('id'))
      .where('deprovisioned_at', 'is', null)
      .returning(visible),
  );
  const row = (await db.executeQuery(update).catch(rethrowUniqueness)).rows[0];
  return row && rowToUser(row);
}

/**
 * Deprovisions a user without deleting the row (DESIGN.md): the SCIM view no longer shows it, its
 * userName is free again, and the product keeps the record. `anonymize` also erases every
 * attribute: the row keeps only its id, its organization and its dates.
 */
export async function deprovisionUser(
  db: Kysely<DB>,
  orgId: string,
  id: string,
  mode: 'deactivate' | 'anonymize',
  now: Date,
): Promise<boolean> {
  if (!isUuid(id)) return false;
  const result = await db
    .updateTable('users')
    .set((eb) => ({
      deprovisioned_at: now,
      updated_at: now,
      active: false,
      ...(mode === 'anonymize'
        ? {
            user_name: sql<string>`'deprovisioned-' || id`,
            external_id: null,
            display_name: null,
            data: JSON.stringify({ active: false }),
          }
        : { data: sql<string>`jsonb_set(${eb.ref('data')}, '{active}', 'false'::jsonb)` }),
    }))
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .where('deprovisioned_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteUser(db: Kysely<DB>, orgId: string, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  const result = await db
    .deleteFrom('users')
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .where('deprovisioned_at', 'is', null)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** How users are stored, for the filter compiler: columns first, the rest in `data`. */
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
  indexedValues: new Set(['emails']),
};

/** The organization's users (its id in the slot `org`) that match the filter. */
function matchingUsers(db: Kysely<DB>, query: ListQuery) {
  const base = db.selectFrom('users').where('org_id', '=', slot('org')).where('deprovisioned_at', 'is', null);
  return query.filter ? base.where(query.filter.where()) : base;
}

/**
 * The rows of one page, in the direction they are read (tests EXPLAIN it), with each user's groups
 * when `groups` says the response carries them.
 */
export function userPageQuery(
  db: Kysely<DB>,
  orgId: string,
  query: ListQuery,
  groups = false,
): CompiledQuery<PagedUserRow> {
  return compiledList('users', orgId, query, groups ? 'page with groups' : 'page', () => {
    if (!groups) return pageRows(matchingUsers(db, query).select(visible), 'users', query);
    const paged = pageRows(matchingUsers(db, query).select([...visible, 'org_id']), 'users', query);
    return decoratePage(db, paged, 'users', query, visible, [groupsOfUser]);
  });
}

/** One page of the organization's users that match the query, and how many match in all. */
export async function listUsers(
  db: Kysely<DB>,
  orgId: string,
  query: ListQuery,
  options: { groups: boolean },
): Promise<ListResult<StoredUser>> {
  return collectPage(
    db,
    query,
    () =>
      compiledList('users', orgId, query, 'count', () =>
        matchingUsers(db, query).select((eb) => eb.fn.countAll<string>().as('total')),
      ),
    () => userPageQuery(db, orgId, query, options.groups),
    rowToUser,
  );
}
