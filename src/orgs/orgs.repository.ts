// SQL of organizations: rows never leave this module.
import { type Kysely, type Selectable, sql } from 'kysely';
import { isUuid } from '../db/ids.js';
import type { DB, DeprovisioningMode, OrgsTable } from '../db/tables.js';

export interface StoredOrg {
  readonly id: string;
  readonly name: string;
  readonly groupSync: boolean;
  readonly deprovisioning: DeprovisioningMode;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

function rowToOrg(row: Selectable<OrgsTable>): StoredOrg {
  return {
    id: row.id,
    name: row.name,
    groupSync: row.group_sync,
    deprovisioning: row.deprovisioning,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function insertOrg(
  db: Kysely<DB>,
  org: { id: string; name: string; groupSync: boolean; deprovisioning: DeprovisioningMode },
  now: Date,
): Promise<StoredOrg> {
  const row = await db
    .insertInto('orgs')
    .values({
      id: org.id,
      name: org.name,
      group_sync: org.groupSync,
      deprovisioning: org.deprovisioning,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return rowToOrg(row);
}

export async function listOrgs(db: Kysely<DB>): Promise<StoredOrg[]> {
  const rows = await db.selectFrom('orgs').selectAll().orderBy('created_at').orderBy('id').execute();
  return rows.map(rowToOrg);
}

export async function findOrg(db: Kysely<DB>, id: string): Promise<StoredOrg | undefined> {
  if (!isUuid(id)) return undefined;
  const row = await db.selectFrom('orgs').selectAll().where('id', '=', id).executeTakeFirst();
  return row && rowToOrg(row);
}

export async function updateOrg(
  db: Kysely<DB>,
  id: string,
  changes: {
    name?: string | undefined;
    groupSync?: boolean | undefined;
    deprovisioning?: DeprovisioningMode | undefined;
  },
  now: Date,
): Promise<StoredOrg | undefined> {
  if (!isUuid(id)) return undefined;
  const row = await db
    .updateTable('orgs')
    .set({
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.groupSync !== undefined ? { group_sync: changes.groupSync } : {}),
      ...(changes.deprovisioning !== undefined ? { deprovisioning: changes.deprovisioning } : {}),
      updated_at: now,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  return row && rowToOrg(row);
}

/** Deletes the organization; its tokens, users, groups, memberships and audit log go with it. */
export async function deleteOrg(db: Kysely<DB>, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  const result = await db.deleteFrom('orgs').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Locks the organization's row until the transaction ends: its changes of one kind take turns. */
export async function lockOrg(db: Kysely<DB>, id: string): Promise<void> {
  await sql`select 1 from orgs where id = ${id} for update`.execute(db);
}
