import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const ADMIN_TOKEN_FILE = 'admin-token';

/** Thrown at start when scimd runs on Postgres without SCIMD_ADMIN_TOKEN, or with a weak one. */
class AdminTokenRequiredError extends Error {}

/** The shortest admin token scimd serves with: it guards every organization. */
const MIN_ADMIN_TOKEN_LENGTH = 32;
const MAKE_ONE = 'Make one with: openssl rand -base64 32';

function strongEnough(token: string, where: string): string {
  if (token.length >= MIN_ADMIN_TOKEN_LENGTH) return token;
  throw new AdminTokenRequiredError(
    `${where} is ${token.length} characters long; the admin token must be at least ${MIN_ADMIN_TOKEN_LENGTH}. ${MAKE_ONE}`,
  );
}

/**
 * The admin API's bearer: SCIMD_ADMIN_TOKEN when set. On Postgres it must be set, so that every
 * scimd process on the database accepts the same token (a load balancer spreads admin calls over
 * them). On embedded PGlite, one process, it may instead be the token in $DATA_DIR/admin-token,
 * generated (mode 0600) on first start.
 */
export function resolveAdminToken(
  configured: string | undefined,
  dataDir: string,
  onPostgres: boolean,
): { token: string; generatedAt?: string; path?: string } {
  if (configured) return { token: strongEnough(configured, 'SCIMD_ADMIN_TOKEN') };
  if (onPostgres) {
    throw new AdminTokenRequiredError(
      'SCIMD_ADMIN_TOKEN must be set when DATABASE_URL is: every scimd process on the database must ' +
        `accept the same admin token. ${MAKE_ONE}, and give it to every process.`,
    );
  }
  const path = join(dataDir, ADMIN_TOKEN_FILE);
  if (existsSync(path)) return { token: strongEnough(readFileSync(path, 'utf8').trim(), path), path };
  mkdirSync(dataDir, { recursive: true });
  const token = `scimd_admin_${randomBytes(32).toString('base64url')}`;
  writeFileSync(path, `${token}\n`, { mode: 0o600, flag: 'wx' });
  return { token, generatedAt: path, path };
}
