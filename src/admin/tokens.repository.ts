import type { Kysely, Selectable } from 'kysely';
import type { DB, ScimTokensTable, TokenScope } from '../db/tables.js';

/** A token as the admin API sees it: never the secret, never its hash. */
export interface StoredToken {
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
