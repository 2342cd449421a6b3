import type { Kysely, Selectable } from 'kysely';
import { isUuid } from '../db/ids.js';
import type { DB, ScimTokensTable, TokenScope } from '../db/tables.js';

/** A token as the admin API sees it: never the secret, never its hash. */
export interface StoredToken {
  /** When the token last served a request that succeeded (the rotation guard reads it). */
  readonly lastSuccessAt: Date | null;
  readonly id: string;
  readonly name: string;
  readonly scopes: TokenScope[];
  readonly prefix: string;
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
  readonly revokedAt: Date | null;
  readonly lastUsedAt: Date | null;
  readonly replaces: string | null;
  readonly replacedBy: string | null;
}

const columns = [
  'id',
  'name',
  'scopes',
  'prefix',
  'created_at',
  'expires_at',
  'revoked_at',
  'last_used_at',
  'last_success_at',
  'replaces',
  'replaced_by',
] as const;

function rowToToken(row: Pick<Selectable<ScimTokensTable>, (typeof columns)[number]>): StoredToken {
  return {
    id: row.id,
    name: row.name,
    scopes: row.scopes as TokenScope[],
    prefix: row.prefix,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at,
    lastSuccessAt: row.last_success_at,
    replaces: row.replaces,
    replacedBy: row.replaced_by,
  };
}

export async function insertToken(
  db: Kysely<DB>,
  orgId: string,
  token: {
    id: string;
    name: string;
    scopes: TokenScope[];
    prefix: string;
    secretHash: Buffer;
    expiresAt: Date | null;
    replaces?: string | null;
  },
  now: Date,
): Promise<StoredToken> {
  const row = await db
    .insertInto('scim_tokens')
    .values({
      org_id: orgId,
      id: token.id,
      name: token.name,
      scopes: token.scopes,
      prefix: token.prefix,
      secret_hash: token.secretHash,
      created_at: now,
      expires_at: token.expiresAt,
      replaces: token.replaces ?? null,
    })
    .returning(columns)
    .executeTakeFirstOrThrow();
  return rowToToken(row);
}

export async function listTokens(db: Kysely<DB>, orgId: string): Promise<StoredToken[]> {
  const rows = await db
    .selectFrom('scim_tokens')
    .select(columns)
    .where('org_id', '=', orgId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(rowToToken);
}

export async function findToken(
  db: Kysely<DB>,
  orgId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<StoredToken | undefined> {
  if (!isUuid(id)) return undefined;
  let query = db.selectFrom('scim_tokens').select(columns).where('org_id', '=', orgId).where('id', '=', id);
  if (options.forUpdate) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  return row && rowToToken(row);
}

export async function updateToken(
  db: Kysely<DB>,
  orgId: string,
  id: string,
  changes: { expiresAt?: Date | null; revokedAt?: Date; replacedBy?: string },
): Promise<StoredToken> {
  const row = await db
    .updateTable('scim_tokens')
    .set({
      ...(changes.expiresAt !== undefined ? { expires_at: changes.expiresAt } : {}),
      ...(changes.revokedAt ? { revoked_at: changes.revokedAt } : {}),
      ...(changes.replacedBy ? { replaced_by: changes.replacedBy } : {}),
    })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .returning(columns)
    .executeTakeFirstOrThrow();
  return rowToToken(row);
}
