import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const ADMIN_TOKEN_FILE = 'admin-token';

/**
 * The admin API's bearer: SCIMD_ADMIN_TOKEN when set, otherwise the token in $DATA_DIR/admin-token,
 * generated (mode 0600) on first start.
 */
export function resolveAdminToken(
  configured: string | undefined,
  dataDir: string,
): { token: string; generatedAt?: string; path?: string } {
  if (configured) return { token: configured };
  const path = join(dataDir, ADMIN_TOKEN_FILE);
  if (existsSync(path)) return { token: readFileSync(path, 'utf8').trim(), path };
  mkdirSync(dataDir, { recursive: true });
  const token = `scimd_admin_${randomBytes(32).toString('base64url')}`;
  writeFileSync(path, `${token}\n`, { mode: 0o600, flag: 'wx' });
  return { token, generatedAt: path, path };
}
