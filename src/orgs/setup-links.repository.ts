// Setup links: rows never leave this module with their hash.
import type { ExpressionBuilder, Kysely, Selectable } from 'kysely';
import { isUuid } from '../db/ids.js';
import type { DB, SetupLinksTable } from '../db/tables.js';

export interface StoredSetupLink {
  readonly id: string;
  readonly orgId: string;
  readonly prefix: string;
  readonly note: string;
  readonly createdBy: string;
  readonly createdAt: Date;
  readonly expiresAt: Date;
  readonly revokedAt: Date | null;
  readonly lastOpenedAt: Date | null;
}

const COLUMNS = [
  'id',
  'org_id',
  'prefix',
  'note',
  'created_by',
  'created_at',
  'expires_at',
  'revoked_at',
  'last_opened_at',
] as const;

const toLink = (row: Omit<Selectable<SetupLinksTable>, 'secret_hash'>): StoredSetupLink => ({
  id: row.id,
  orgId: row.org_id,
  prefix: row.prefix,
  note: row.note,
  createdBy: row.created_by,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  revokedAt: row.revoked_at,
  lastOpenedAt: row.last_opened_at,
});

export async function insertSetupLink(
  db: Kysely<DB>,
  link: Omit<StoredSetupLink, 'revokedAt' | 'lastOpenedAt'> & { secretHash: Buffer },
): Promise<StoredSetupLink> {
  const row = await db
    .insertInto('setup_links')
    .values({
      id: link.id,
      org_id: link.orgId,
      prefix: link.prefix,
      secret_hash: link.secretHash,
      note: link.note,
      created_by: link.createdBy,
      created_at: link.createdAt,
      expires_at: link.expiresAt,
    })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
  return toLink(row);
}

export async function listSetupLinks(db: Kysely<DB>, orgId: string): Promise<StoredSetupLink[]> {
  const rows = await db
    .selectFrom('setup_links')
    .select(COLUMNS)
    .where('org_id', '=', orgId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
  return rows.map(toLink);
}

/** Revokes a link (one revoked already keeps its time); undefined when the organization has no such link. */
export async function revokeSetupLink(
  db: Kysely<DB>,
  orgId: string,
  id: string,
  now: Date,
): Promise<StoredSetupLink | undefined> {
  if (!isUuid(id)) return undefined;
  const row = await db
    .updateTable('setup_links')
    .set((eb) => ({ revoked_at: eb.fn.coalesce('revoked_at', eb.val(now)) }))
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .returning(COLUMNS)
    .executeTakeFirst();
  return row ? toLink(row) : undefined;
}

/** The link whose secret hashes to `secretHash`, if it is neither revoked nor expired at `now`. */
const liveBySecret = (secretHash: Buffer, now: Date) => (eb: ExpressionBuilder<DB, 'setup_links'>) =>
  eb.and([eb('secret_hash', '=', secretHash), eb('revoked_at', 'is', null), eb('expires_at', '>', now)]);

/** The link whose secret hashes to `secretHash`, if it is neither expired nor revoked. */
export async function findLiveSetupLink(
  db: Kysely<DB>,
  secretHash: Buffer,
  now: Date,
): Promise<StoredSetupLink | undefined> {
  const row = await db
    .selectFrom('setup_links')
    .select(COLUMNS)
    .where(liveBySecret(secretHash, now))
    .executeTakeFirst();
  return row ? toLink(row) : undefined;
}

/** The link whose secret hashes to `secretHash`, marked opened now, if it is neither expired nor revoked. */
export async function openSetupLink(
  db: Kysely<DB>,
  secretHash: Buffer,
  now: Date,
): Promise<StoredSetupLink | undefined> {
  const row = await db
    .updateTable('setup_links')
    .set({ last_opened_at: now })
    .where(liveBySecret(secretHash, now))
    .returning(COLUMNS)
    .executeTakeFirst();
  return row ? toLink(row) : undefined;
}
