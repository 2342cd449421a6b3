// Keeping remembered token checks honest across processes. An admin change to an organization or its
// tokens announces the organization on a Postgres channel inside its transaction, so the message goes
// out exactly when the change commits; every scimd process listens and forgets that organization's
// checks. The process that made the change also forgets them itself, at once, before it answers.
import type { Kysely } from 'kysely';
import type { Database, Listening } from '../db/database.js';
import { notifyChannel } from '../db/notify.js';
import type { DB } from '../db/tables.js';
import type { Logger } from '../log.js';
import type { TokenChecks } from './scim-auth.js';
import { TOKEN_CACHE_TTL_MS } from './token-cache.js';

const AUTH_CHANGES_CHANNEL = 'scimd_auth_changes';

/** Inside the transaction that changes an organization's settings or tokens. */
async function announceAuthChange(trx: Kysely<DB>, orgId: string): Promise<void> {
  await notifyChannel(trx, AUTH_CHANGES_CHANNEL, orgId);
}

/**
 * Makes a change to an organization's settings or tokens after which no process may answer from a
 * token check made before it: announced to the others on commit, forgotten here before the answer.
 */
export async function changeOrgAuth<T>(
  db: Kysely<DB>,
  checks: TokenChecks,
  orgId: string,
  change: (trx: Kysely<DB>) => Promise<T>,
): Promise<T> {
  const result = await db.transaction().execute(async (trx) => {
    const changed = await change(trx);
    await announceAuthChange(trx, orgId);
    return changed;
  });
  checks.invalidateOrg(orgId);
  return result;
}

/**
 * Forgets an organization's checks when another process announces a change to it, and everything
 * when announcements may have been missed. Without a listener (PGlite: one process) there is no
 * other process to hear from.
 */
export function followAuthChanges(
  database: Database,
  checks: TokenChecks,
  logger: Logger,
): Listening | undefined {
  return database.listen?.(
    AUTH_CHANGES_CHANNEL,
    (orgId) => checks.invalidateOrg(orgId),
    (why) => {
      checks.clear();
      if (why === 'lost')
        logger.warn(
          `lost the connection that hears admin changes; token checks are trusted ${TOKEN_CACHE_TTL_MS / 1000} s at most`,
        );
      else logger.debug('listening for admin changes to token checks');
    },
  );
}
