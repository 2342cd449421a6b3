// Read-only API keys for the product: rows never leave this module.
import type { Kysely, Selectable } from 'kysely';
import { isUuid } from '../db/ids.js';
import type { ApiKeysTable, DB } from '../db/tables.js';

export interface StoredApiKey {
  readonly id: string;
  readonly name: string;
  readonly prefix: string;
  readonly createdAt: Date;
  readonly revokedAt: Date | null;
  readonly lastUsedAt: Date | null;
}

const toKey = (row: Omit<Selectable<ApiKeysTable>, 'secret_hash'>): StoredApiKey => ({
  id: row.id,
  name: row.name,
  prefix: row.prefix,
  createdAt: row.created_at,
  revokedAt: row.revoked_at,
  lastUsedAt: row.last_used_at,
});

const COLUMNS = ['id', 'name', 'prefix', 'created_at', 'revoked_at', 'last_used_at'] as const;

export async function insertApiKey(
  db: Kysely<DB>,
  key: { id: string; name: string; prefix: string; secretHash: Buffer },
  now: Date,
): Promise<StoredApiKey> {
  const row = await db
    .insertInto('api_keys')
    .values({ id: key.id, name: key.name, prefix: key.prefix, secret_hash: key.secretHash, created_at: now })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
  return toKey(row);
}

export async function listApiKeys(db: Kysely<DB>): Promise<StoredApiKey[]> {
  const rows = await db.selectFrom('api_keys').select(COLUMNS).orderBy('created_at').orderBy('id').execute();
  return rows.map(toKey);
}

/** Revokes a key (a key revoked already keeps its time); undefined when there is no such key. */
export async function revokeApiKey(db: Kysely<DB>, id: string, now: Date): Promise<StoredApiKey | undefined> {
  if (!isUuid(id)) return undefined;
  const row = await db
    .updateTable('api_keys')
    .set((eb) => ({ revoked_at: eb.fn.coalesce('revoked_at', eb.val(now)) }))
    .where('id', '=', id)
    .returning(COLUMNS)
    .executeTakeFirst();
  return row && toKey(row);
}

/** The keys that could be this secret (by its clear prefix), with their hashes to compare. */
export async function apiKeysWithPrefix(
  db: Kysely<DB>,
  prefix: string,
): Promise<{ id: string; secretHash: Buffer; revoked: boolean }[]> {
  const rows = await db
    .selectFrom('api_keys')
    .select(['id', 'secret_hash', 'revoked_at'])
    .where('prefix', '=', prefix)
    .execute();
  return rows.map((r) => ({ id: r.id, secretHash: r.secret_hash, revoked: r.revoked_at !== null }));
}

/** Whether the key exists and is not revoked. */
export async function apiKeyIsLive(db: Kysely<DB>, id: string): Promise<boolean> {
  const row = await db
    .selectFrom('api_keys')
    .select('id')
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return row !== undefined;
}

/** Records a key's use, at most once a minute. */
export async function touchApiKey(db: Kysely<DB>, id: string, now: Date): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ last_used_at: now })
    .where('id', '=', id)
    .where((eb) =>
      eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', new Date(now.getTime() - 60_000))]),
    )
    .execute();
}
