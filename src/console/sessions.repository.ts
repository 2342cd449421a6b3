// Console sessions: rows never leave this module with their hash.
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';

export interface StoredSession {
  readonly id: string;
  /** Until when the session lasts: its own end, or its setup link's when that comes first. */
  readonly expiresAt: Date;
  /** The setup link and its organization; undefined for an operator's session. */
  readonly setupLink?: { readonly id: string; readonly orgId: string };
}

export async function insertSession(
  db: Kysely<DB>,
  session: { id: string; secretHash: Buffer; setupLinkId: string | null; createdAt: Date; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto('console_sessions')
    .values({
      id: session.id,
      secret_hash: session.secretHash,
      setup_link_id: session.setupLinkId,
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
    .select(['s.id', 's.expires_at', 'l.id as link_id', 'l.org_id', 'l.expires_at as link_expires_at'])
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
  if (!row.link_id || !row.org_id || !row.link_expires_at) return { id: row.id, expiresAt: row.expires_at };
  return {
    id: row.id,
    expiresAt: row.link_expires_at < row.expires_at ? row.link_expires_at : row.expires_at,
    setupLink: { id: row.link_id, orgId: row.org_id },
  };
}

export async function deleteSession(db: Kysely<DB>, secretHash: Buffer): Promise<void> {
  await db.deleteFrom('console_sessions').where('secret_hash', '=', secretHash).execute();
}

export async function deleteExpiredSessions(db: Kysely<DB>, now: Date): Promise<void> {
  await db.deleteFrom('console_sessions').where('expires_at', '<=', now).execute();
}
