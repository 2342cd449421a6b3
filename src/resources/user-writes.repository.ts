// The batched writes of users (db/write-batches.ts): creates, updates (a PUT, a PATCH's merge) and
// removals, each with its count and audit entry in its statement. Concurrent writes of an
// organization share a statement; one instance per process (resource-writes.ts).
import { type Kysely, type QueryCreator, type SqlBool, sql, type UpdateObject } from 'kysely';
import type { AuditEntry } from '../audit/audit.js';
import { AUDIT_BATCH_COLUMNS, auditBatchWritten, auditValues } from '../audit/audit.repository.js';
import { rethrowDuplicateKey } from '../db/constraints.js';
import { isUuid } from '../db/ids.js';
import { param, type Statement, statement } from '../db/statement.js';
import type { DB, DeprovisioningMode } from '../db/tables.js';
import { batchRows, WriteBatches } from '../db/write-batches.js';
import { countRows } from './counts.repository.js';
import { rolesTurn } from './group-members.repository.js';
import type { StoredUser } from './users.js';
import { groupsOfUser, rowToUser } from './users.repository.js';
import type { ScimResource } from './validate.js';

/** The columns the product reads directly, derived from the attributes, as a batch row carries them. */
function userValues(attributes: ScimResource) {
  return {
    user_name: String(attributes.userName),
    external_id: typeof attributes.externalId === 'string' ? attributes.externalId : null,
    display_name: typeof attributes.displayName === 'string' ? attributes.displayName : null,
    active: attributes.active !== false,
    data: attributes,
  };
}

/** A user to create, and the entry of its creation when it has one. */
export interface NewUser {
  readonly id: string;
  readonly attributes: ScimResource;
  readonly at: Date;
  readonly audit?: AuditEntry | undefined;
}

/**
 * A batch of users of one organization, their count and their creations' audit entries in one
 * statement. The insert returns only the ids: the rest is what was just written, so reading it back
 * (the data as JSON and both dates, parsed again) is work for nothing on both sides of the connection.
 */
const insertUsersStatement = statement((db) =>
  db
    .with('batch', (w) =>
      w
        .selectFrom(
          batchRows(
            `n integer, id uuid, user_name text, external_id text, display_name text, active boolean, data jsonb, at timestamptz, ${AUDIT_BATCH_COLUMNS}`,
          ),
        )
        .selectAll(),
    )
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
          sql`select ${param('org')}::uuid, id, user_name, external_id, display_name, active, data, at, at
            from batch order by n`,
        )
        .returning(['id', 'org_id']),
    )
    .with('counted', countRows('users', 1))
    .with('audited', auditBatchWritten('id'))
    .selectFrom('written')
    .select('id'),
);

const createsOf = () =>
  new WriteBatches<NewUser, void>({
    row: (u) => ({
      id: u.id,
      at: u.at,
      ...userValues(u.attributes),
      ...(u.audit ? auditValues(u.audit, u.at) : {}),
    }),
    writeAll: async (db, orgId, users, batch) => {
      await insertUsersStatement.run(db, { org: orgId, batch }).catch(rethrowDuplicateKey);
      return users.map(() => undefined);
    },
  });

/** A write of a user's attributes: all of them, or those a merge patch names (`merge`). */
interface UserUpdate {
  readonly id: string;
  /** The attributes as stored, or a merge patch of them. */
  readonly value: ScimResource;
  readonly merge: boolean;
  /** Writes only a row still at this version (findUser's). */
  readonly version: string | undefined;
  readonly at: Date;
  readonly audit: AuditEntry;
}

/** The attributes a batch's write leaves: the merge patch merged into the row, or the whole value. */
const nextData = sql<string>`case when batch.merge then scim_merge_patch(users.data, batch.value) else batch.value end`;
/**
 * A column derived from an attribute, as userValues derives it: from the value written, unless it is
 * a merge patch that does not name the attribute.
 */
const derived = <T>(attribute: string, column: string, value: string) =>
  sql<T>`case when batch.merge and not batch.value ? ${sql.lit(attribute)} then users.${sql.ref(column)} else ${sql.raw(value)} end`;
const textOf = (attribute: string) =>
  `case when jsonb_typeof(batch.value -> '${attribute}') = 'string' then batch.value ->> '${attribute}' end`;

/**
 * The batch's users by key, as the index's own condition: joined to the batch alone, whose size
 * Postgres cannot foresee, an organization of a few thousand users was read whole for each batch.
 */
const batchKeys = sql<SqlBool>`users.id = any(array(select id from batch))`;

/**
 * A batch of writes of users' attributes with their audit entries, in one statement; each user as
 * written, with its groups. A merge reads the row it updates (a concurrent write is merged into, not
 * overwritten); a write given a version applies only to a row still at it. meta.lastModified stays
 * when a merge changes nothing.
 */
const updateUsersStatement = statement((db) =>
  db
    .with('batch', (w) =>
      w
        .selectFrom(
          batchRows<{ n: number; id: string; merge: boolean }>(
            `n integer, id uuid, value jsonb, merge boolean, version text, at timestamptz, ${AUDIT_BATCH_COLUMNS}`,
          ),
        )
        .selectAll(),
    )
    .with('written', (w) =>
      w
        .updateTable('users')
        .from('batch')
        .set({
          data: nextData,
          user_name: derived<string>('userName', 'user_name', "batch.value ->> 'userName'"),
          external_id: derived<string | null>('externalId', 'external_id', textOf('externalId')),
          display_name: derived<string | null>('displayName', 'display_name', textOf('displayName')),
          active: derived<boolean>(
            'active',
            'active',
            "coalesce(batch.value -> 'active' <> 'false'::jsonb, true)",
          ),
          updated_at: sql<Date>`case when batch.merge and ${nextData} = users.data then users.updated_at else batch.at end`,
        })
        .where('users.org_id', '=', param('org'))
        .where(sql<SqlBool>`users.id = batch.id`)
        .where(batchKeys)
        .where('users.deprovisioned_at', 'is', null)
        .where(sql<SqlBool>`(batch.version is null or users.xmin = batch.version::xid)`)
        .returning([
          'users.id',
          'users.data',
          'users.created_at',
          'users.updated_at',
          'users.org_id',
          'batch.n',
          'batch.merge',
        ]),
    )
    .with('audited', auditBatchWritten('id'))
    .selectFrom('written as users')
    // A replace wrote the attributes it was given: they need not travel back.
    .select([
      'id',
      sql<ScimResource | null>`case when merge then data end`.as('data'),
      'created_at',
      'updated_at',
      'n',
      groupsOfUser,
    ]),
);

const updatesOf = () =>
  new WriteBatches<UserUpdate, StoredUser | undefined>({
    row: (u) => ({
      id: u.id,
      value: u.value,
      merge: u.merge,
      version: u.version ?? null,
      at: u.at,
      ...auditValues(u.audit, u.at),
    }),
    lockKey: (u) => u.id,
    writeAll: async (db, orgId, writes, batch) => {
      const { rows } = await updateUsersStatement.run(db, { org: orgId, batch }).catch(rethrowDuplicateKey);
      const written = new Map(rows.map((row) => [row.n, row]));
      return writes.map((write, n) => {
        const row = written.get(n);
        return row && rowToUser({ ...row, data: row.data ?? write.value });
      });
    },
    apart: (a, b) => a.id === b.id,
  });

/** A removal of a user: the row deprovisioned, or deleted. */
interface UserRemoval {
  readonly id: string;
  readonly at: Date;
  readonly audit: AuditEntry;
}

/** The users a batch of removals names. */
const removalRows = () =>
  batchRows<{ n: number; id: string; at: Date }>(
    `n integer, id uuid, at timestamptz, ${AUDIT_BATCH_COLUMNS}`,
  );

/**
 * The batch of a removal, after the organization's roles turn: a removal locks its users, and the
 * memberships that go with them recompute access (rolesTurn).
 */
const removalBatch = (w: QueryCreator<DB>) => w.selectFrom([rolesTurn(), removalRows()]).selectAll('batch');

/**
 * A deprovisioning update (`set`) of a batch of users in one statement with what goes with it: the
 * organization's count of users goes down and the audit entries are written. Each user leaves every
 * group by a trigger (migrations/…_deprovisioned-users-leave-groups.ts); a write adding one of them
 * to a group waits for the update, or the update for it (membersAreUsers).
 */
const deprovisioning = (set: UpdateObject<DB, 'users'>) =>
  statement((db) =>
    db
      .with('batch', removalBatch)
      .with('written', (w) =>
        w
          .updateTable('users')
          .from('batch')
          .set(set)
          .where('users.org_id', '=', param('org'))
          .where(sql<SqlBool>`users.id = batch.id`)
          .where(batchKeys)
          .where('users.deprovisioned_at', 'is', null)
          .returning(['users.org_id', 'users.id']),
      )
      .with('counted', countRows('users', -1))
      .with('audited', auditBatchWritten('id'))
      .selectFrom('written')
      .select('id'),
  );

/** Deletes a batch of users (their memberships go with the rows) with the count and the audit entries. */
const deleteUsersStatement = statement((db) =>
  db
    .with('batch', removalBatch)
    .with('written', (w) =>
      w
        .deleteFrom('users')
        .using('batch')
        .where('users.org_id', '=', param('org'))
        .where(sql<SqlBool>`users.id = batch.id`)
        .where(batchKeys)
        .where('users.deprovisioned_at', 'is', null)
        .returning(['users.org_id', 'users.id']),
    )
    .with('counted', countRows('users', -1))
    .with('audited', auditBatchWritten('id'))
    .selectFrom('written')
    .select('id'),
);

/** Removals in batches by one of these statements: whether each found its user. */
const removals = (remove: Statement<{ id: string }>) =>
  new WriteBatches<UserRemoval, boolean>({
    row: (u) => ({ id: u.id, at: u.at, ...auditValues(u.audit, u.at) }),
    lockKey: (u) => u.id,
    writeAll: async (db, orgId, users, batch) => {
      const { rows } = await remove.run(db, { org: orgId, batch });
      const removed = new Set(rows.map((row) => row.id));
      return users.map((u) => removed.has(u.id));
    },
    apart: (a, b) => a.id === b.id,
  });

/** The statements that write users already there, by what they do. */
export const userWriteStatements = {
  update: updateUsersStatement,
  deactivate: deprovisioning({
    deprovisioned_at: sql<Date>`batch.at`,
    updated_at: sql<Date>`batch.at`,
    active: sql<boolean>`false`,
    data: sql<string>`jsonb_set(users.data, '{active}', 'false'::jsonb)`,
  }),
  anonymize: deprovisioning({
    deprovisioned_at: sql<Date>`batch.at`,
    updated_at: sql<Date>`batch.at`,
    active: sql<boolean>`false`,
    user_name: sql<string>`'deprovisioned-' || users.id`,
    external_id: sql<null>`null`,
    display_name: sql<null>`null`,
    data: sql<string>`'{"active": false}'::jsonb`,
  }),
  delete: deleteUsersStatement,
} as const;

const removalsOf = () => ({
  deactivate: removals(userWriteStatements.deactivate),
  anonymize: removals(userWriteStatements.anonymize),
  delete: removals(userWriteStatements.delete),
});

/**
 * The batched writes of users: concurrent creates, updates and removals of an organization share a
 * statement (db/write-batches.ts). One instance per process (resources/resource-writes.ts).
 */
export class UserWrites {
  readonly #creates = createsOf();
  readonly #updates = updatesOf();
  readonly #removals = removalsOf();

  /** Creates a user, with its count and the audit entry of its creation when given. Throws DuplicateKeyError. */
  insert(db: Kysely<DB>, orgId: string, user: NewUser): Promise<void> {
    return this.#creates.write(db, orgId, user);
  }

  /**
   * Writes the user's attributes with the audit entry of the write; undefined when no user has this
   * id, or (given `version`) its row has changed since. Throws DuplicateKeyError.
   */
  async replace(
    db: Kysely<DB>,
    orgId: string,
    id: string,
    attributes: ScimResource,
    now: Date,
    audit: AuditEntry,
    version?: string,
  ): Promise<StoredUser | undefined> {
    if (!isUuid(id)) return undefined;
    return this.#updates.write(db, orgId, {
      id: id.toLowerCase(),
      value: attributes,
      merge: false,
      version,
      at: now,
      audit,
    });
  }

  /**
   * Merges a PATCH's merge patch (patch.ts mergePatchOf) into the user, with the audit entry, without
   * reading it first; undefined when no user has this id. Throws DuplicateKeyError.
   */
  async merge(
    db: Kysely<DB>,
    orgId: string,
    id: string,
    patch: Record<string, unknown>,
    now: Date,
    audit: AuditEntry,
  ): Promise<StoredUser | undefined> {
    if (!isUuid(id)) return undefined;
    return this.#updates.write(db, orgId, {
      id: id.toLowerCase(),
      value: patch,
      merge: true,
      version: undefined,
      at: now,
      audit,
    });
  }

  /**
   * Removes a user as the organization's deprovisioning mode says, with its audit entry; false when no
   * user has this id. `deactivate` and `anonymize` keep the row: the SCIM view no longer shows it, its
   * userName is free again, and the product keeps the record (`anonymize` erases every attribute: the
   * row keeps only its id, its organization and its dates); `delete` removes it. Either way the user
   * leaves every group.
   */
  async remove(
    db: Kysely<DB>,
    orgId: string,
    id: string,
    mode: DeprovisioningMode,
    now: Date,
    audit: AuditEntry,
  ): Promise<boolean> {
    if (!isUuid(id)) return false;
    return this.#removals[mode].write(db, orgId, { id: id.toLowerCase(), at: now, audit });
  }
}
