// Console sessions: rows never leave this module with their hash.
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';

export interface StoredSession {
  readonly id: string;
  /** An operator's session: the fingerprint of the admin token it was signed in with. */
  readonly adminFingerprint: string | null;
  /** The setup link and its organization; undefined for an operator's session. */
  readonly setupLink?: { readonly id: string; readonly orgId: string };
}

export async function insertSession(
  db: Kysely<DB>,
  session: {
    id: string;
    secretHash: Buffer;
    setupLinkId: string | null;
    adminFingerprint: string | null;
    createdAt: Date;
    expiresAt: Date;
  },
): Promise<void> {
  await db
    .insertInto('console_sessions')
    .values({
      id: session.id,
      secret_hash: session.secretHash,
      setup_link_id: session.setupLinkId,
      admin_fingerprint: session.adminFingerprint,
      created_at: session.createdAt,
      expires_at: session.expiresAt,
    })
    .execute();
}

/**
 * The live session whose secret hashes to `secretHash`: not expired, and for a setup link's session,
 * its link neither expired nor revoked.
 */
export async function findLiveSession(
  db: Kysely<DB>,
  secretHash: Buffer,
  now: Date,
): Promise<StoredSession | undefined> {
  const row = await db
    .selectFrom('console_sessions as s')
    .leftJoin('setup_links as l', 'l.id', 's.setup_link_id')
    .select(['s.id', 's.admin_fingerprint', 'l.id as link_id', 'l.org_id'])
    .where('s.secret_hash', '=', secretHash)
    .where('s.expires_at', '>', now)
    .where((eb) =>
      eb.or([
        eb('s.setup_link_id', 'is', null),
        eb.and([eb('l.revoked_at', 'is', null), eb('l.expires_at', '>', now)]),
      ]),
    )
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    id: row.id,
    adminFingerprint: row.admin_fingerprint,
    ...(row.link_id && row.org_id ? { setupLink: { id: row.link_id, orgId: row.org_id } } : {}),
  };
}

export async function deleteSession(db: Kysely<DB>, secretHash: Buffer): Promise<void> {
  await db.deleteFrom('console_sessions').where('secret_hash', '=', secretHash).execute();
}

export async function deleteExpiredSessions(db: Kysely<DB>, now: Date): Promise<void> {
  await db.deleteFrom('console_sessions').where('expires_at', '<=', now).execute();
}
