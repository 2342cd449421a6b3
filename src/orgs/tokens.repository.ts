// SQL for SCIM tokens: what the admin API creates, lists and changes, and what authentication looks
// up and records.
import { type Kysely, type Selectable, sql } from 'kysely';
import { isUuid } from '../db/ids.js';
import { param, statement } from '../db/statement.js';
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

/** The organization's tokens whose secret starts with a prefix, with what a request needs of its organization. */
const tokensByPrefix = statement((db) =>
  db
    .selectFrom('scim_tokens as t')
    .innerJoin('orgs as o', 'o.id', 't.org_id')
    .select([
      't.id',
      't.scopes',
      't.secret_hash',
      't.expires_at',
      't.revoked_at',
      't.last_used_at',
      't.last_success_at',
      'o.group_sync',
      'o.deprovisioning',
      'o.cursor_key',
      'o.schemas_version',
    ])
    .where('t.org_id', '=', param('org'))
    .where('t.prefix', '=', param('prefix')),
);

export type TokenCandidate = Awaited<ReturnType<typeof tokensByPrefix.run>>['rows'][number];

/** The tokens one of which a presented secret may be: few, as prefixes rarely repeat. */
export async function findTokensByPrefix(
  db: Kysely<DB>,
  orgId: string,
  prefix: string,
): Promise<TokenCandidate[]> {
  return (await tokensByPrefix.run(db, { org: orgId, prefix })).rows;
}

/** A null leaves its column as it is. */
const writeUse = statement((db) =>
  db
    .updateTable('scim_tokens')
    .set({
      last_used_at: sql<Date>`coalesce(${param<Date | null>('used')}, last_used_at)`,
      last_success_at: sql<Date>`coalesce(${param<Date | null>('succeeded')}, last_success_at)`,
    })
    .where('org_id', '=', param('org'))
    .where('id', '=', param('id')),
);

/** Records when a token was last used, and last used successfully (either may be left as it is). */
export async function writeTokenUse(
  db: Kysely<DB>,
  orgId: string,
  tokenId: string,
  at: { used: Date | null; succeeded: Date | null },
): Promise<void> {
  await writeUse.run(db, { org: orgId, id: tokenId, ...at });
}
