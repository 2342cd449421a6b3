// SQL of `uniqueness: server` on an organization's own attributes (custom-uniqueness.ts).
import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/tables.js';
import { extensionValuesHold } from '../filter/compile.js';
import type { AttributeDef } from '../schema/types.js';

/** Locks `key` until the transaction ends: two writes of one value take turns. */
export async function lockValue(db: Kysely<DB>, key: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(db);
}

/**
 * Whether another resource of the type (a visible user, or a group) than `self` holds the value of the
 * extension's attribute: the index of extension values finds the candidate users; the comparison
 * decides (lower-cased for a string that is not caseExact).
 */
export async function valueHeld(
  db: Kysely<DB>,
  orgId: string,
  type: string,
  schema: string,
  attribute: AttributeDef,
  value: unknown,
  self: string | undefined,
): Promise<boolean> {
  const same =
    typeof value === 'string' && !attribute.caseExact
      ? sql`lower(r.data -> ${schema} ->> ${attribute.name}) = ${value.toLowerCase()}`
      : sql`r.data -> ${schema} -> ${attribute.name} = ${JSON.stringify(value)}::jsonb`;
  const probe = JSON.stringify({ [schema]: { [attribute.name]: value } });
  const users = sql`r.deprovisioned_at is null and ${extensionValuesHold(sql.ref('r.extension_values'), sql`lower(${probe})::jsonb`)}`;
  const { rows } = await sql<{ taken: boolean }>`
    select exists (
      select 1 from ${sql.table(type === 'User' ? 'users' : 'groups')} r
      where r.org_id = ${orgId} and r.id is distinct from ${self ?? null}::uuid
        and ${type === 'User' ? users : sql`true`} and ${same}
    ) as taken`.execute(db);
  return rows[0]!.taken;
}
