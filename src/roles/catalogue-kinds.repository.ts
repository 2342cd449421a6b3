// SQL of which catalogues an organization has: discovery lists Role and Entitlement only then.
import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/tables.js';

/** Whether the organization's catalogue of roles, and of entitlements, holds any entry. */
export interface CatalogueKinds {
  readonly roles: boolean;
  readonly entitlements: boolean;
}

/** The environment's entries count for every organization, beside its own. */
export async function catalogueKinds(db: Kysely<DB>, orgId: string): Promise<CatalogueKinds> {
  const { rows } = await sql<{ roles: boolean; entitlements: boolean }>`
    select
      exists (select 1 from roles where org_id is null or org_id = ${orgId}) as roles,
      exists (select 1 from entitlements where org_id is null or org_id = ${orgId}) as entitlements`.execute(
    db,
  );
  return rows[0]!;
}
