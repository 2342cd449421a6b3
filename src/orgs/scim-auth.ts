// SCIM authentication: an organization's bearer token, checked against the organization in the URL.
import type { Kysely } from 'kysely';
import { isUuid } from '../db/ids.js';
import type { DB, DeprovisioningMode, TokenScope } from '../db/tables.js';
import { bearerToken } from '../http/bearer.js';
import { UnauthorizedError } from '../http/scim-errors.js';
import { hashMatches, looksLikeSecret, secretDigest, secretPrefix } from '../secrets.js';
import type { OrgContext } from './org-context.js';
import type { TokenCache } from './token-cache.js';
import { findTokensByPrefix, writeTokenUse } from './tokens.repository.js';

/** When a token was last used, and last used successfully, as this process last knew or wrote it. */
interface TokenUsage {
  lastUsedAt: Date | null;
  lastSuccessAt: Date | null;
}

export interface AuthenticatedToken {
  readonly org: OrgContext;
  readonly tokenId: string;
  readonly scopes: readonly TokenScope[];
  readonly expiresAt: Date | null;
  /** Shared by the requests that reuse one cached check, so they record a use once, not each. */
  readonly usage: TokenUsage;
}

/** The token checks a process remembers for a few seconds (token-cache.ts). */
export type TokenChecks = TokenCache<AuthenticatedToken>;

/** lastUsedAt and the last success are written at most this often per token, so reads stay reads. */
const USAGE_WRITE_INTERVAL_MS = 60_000;

/**
 * Finds the token for a presented Authorization header, or throws 401. Every failure looks the same
 * to the caller except for the reason in `detail`, which never echoes the credential. Only successes
 * are remembered in `checks`, keyed by the secret's hash, and expiry is checked again on each use.
 */
export async function authenticateScimRequest(
  db: Kysely<DB>,
  orgId: string,
  authorization: string | undefined,
  now: Date,
  checks?: TokenChecks,
): Promise<AuthenticatedToken> {
  const secret = bearerToken(authorization);
  if (!secret)
    throw new UnauthorizedError(
      'A bearer token is required: Authorization: Bearer <SCIM token>',
      'token_missing',
    );
  if (!looksLikeSecret(secret) || !isUuid(orgId)) throw invalidToken();
  const key = secretDigest(secret);
  const remembered = checks?.get(orgId, key);
  if (remembered) return unexpired(remembered, now);
  const hash = Buffer.from(key, 'base64');
  const readAt = checks?.generation ?? 0;
  const candidates = await findTokensByPrefix(db, orgId, secretPrefix(secret));
  const token = candidates.find((c) => hashMatches(hash, c.secret_hash));
  if (!token) throw invalidToken();
  if (token.revoked_at) throw new UnauthorizedError('This token has been revoked', 'token_revoked', token.id);
  const checked: AuthenticatedToken = {
    org: {
      id: orgId,
      groupSync: token.group_sync,
      deprovisioning: token.deprovisioning as DeprovisioningMode,
      cursorKey: token.cursor_key,
      schemasVersion: token.schemas_version,
    },
    tokenId: token.id,
    scopes: token.scopes as TokenScope[],
    expiresAt: token.expires_at,
    usage: { lastUsedAt: token.last_used_at, lastSuccessAt: token.last_success_at },
  };
  unexpired(checked, now);
  checks?.set(orgId, key, checked, readAt);
  return checked;
}

function unexpired(token: AuthenticatedToken, now: Date): AuthenticatedToken {
  if (token.expiresAt && token.expiresAt <= now)
    throw new UnauthorizedError('This token has expired', 'token_expired', token.tokenId);
  return token;
}

function invalidToken(): UnauthorizedError {
  return new UnauthorizedError(
    'The bearer token is not a valid SCIM token for this organization',
    'token_unknown',
  );
}

function stale(at: Date | null, now: Date): boolean {
  return !at || now.getTime() - at.getTime() >= USAGE_WRITE_INTERVAL_MS;
}

/**
 * Records use (and success) of a token, at most once a minute each. Most requests write nothing, and
 * then this returns undefined at once, so that they do not wait on a promise for nothing.
 */
export function recordTokenUse(
  db: Kysely<DB>,
  token: AuthenticatedToken,
  succeeded: boolean,
  now: Date,
): Promise<unknown> | undefined {
  const { usage } = token;
  // Claimed before the write, so the concurrent requests sharing this check do not write it too.
  const used = stale(usage.lastUsedAt, now) ? now : null;
  const successful = succeeded && stale(usage.lastSuccessAt, now) ? now : null;
  if (!used && !successful) return undefined;
  if (used) usage.lastUsedAt = used;
  if (successful) usage.lastSuccessAt = successful;
  return writeTokenUse(db, token.org.id, token.tokenId, { used, succeeded: successful });
}
