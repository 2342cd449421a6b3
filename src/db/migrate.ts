import { type Kysely, Migrator } from 'kysely';
import { migrations } from '../../migrations/index.js';
import type { DB } from './tables.js';

/**
 * Applies every pending migration; returns the names applied. `schema` names where the tables live
 * when it is not the default: Kysely otherwise finds its bookkeeping tables in any schema.
 */
export async function migrateToLatest(db: Kysely<DB>, schema?: string): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
