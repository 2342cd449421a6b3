// SCIM authentication: an organization's bearer token, checked against the organization in the URL.
import type { Kysely } from 'kysely';
import { isUuid } from '../db/ids.js';
import type { DB, DeprovisioningMode, TokenScope } from '../db/tables.js';
import { UnauthorizedError } from '../http/scim-errors.js';
import type { OrgContext } from '../http/scim-state.js';
import { looksLikeSecret, secretMatches, secretPrefix } from './secrets.js';

export interface AuthenticatedToken {
  readonly org: OrgContext;
  readonly tokenId: string;
  readonly scopes: readonly TokenScope[];
  readonly lastUsedAt: Date | null;
  readonly lastSuccessAt: Date | null;
}

/** lastUsedAt and the last success are written at most this often per token, so reads stay reads. */
export const USAGE_WRITE_INTERVAL_MS = 60_000;

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * Finds the token for a presented Authorization header, or throws 401. Every failure looks the same
 * to the caller except for the reason in `detail`, which never echoes the credential.
 */
export async function authenticateScimRequest(
  db: Kysely<DB>,
  orgId: string,
  authorization: string | undefined,
  now: Date,
): Promise<AuthenticatedToken> {
  const match = authorization ? BEARER.exec(authorization) : null;
  if (!match) throw new UnauthorizedError('A bearer token is required: Authorization: Bearer <SCIM token>');
  const secret = match[1]!;
  if (!looksLikeSecret(secret) || !isUuid(orgId)) throw invalidToken();
  const candidates = await db
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
    ])
    .where('t.org_id', '=', orgId)
    .where('t.prefix', '=', secretPrefix(secret))
    .execute();
  const token = candidates.find((c) => secretMatches(secret, c.secret_hash));
  if (!token) throw invalidToken();
  if (token.revoked_at) throw new UnauthorizedError('This token has been revoked');
  if (token.expires_at && token.expires_at <= now) throw new UnauthorizedError('This token has expired');
  return {
    org: {
      id: orgId,
      groupSync: token.group_sync,
      deprovisioning: token.deprovisioning as DeprovisioningMode,
      cursorKey: token.cursor_key,
    },
    tokenId: token.id,
    scopes: token.scopes as TokenScope[],
    lastUsedAt: token.last_used_at,
    lastSuccessAt: token.last_success_at,
  };
}

function invalidToken(): UnauthorizedError {
  return new UnauthorizedError('The bearer token is not a valid SCIM token for this organization');
}

function stale(at: Date | null, now: Date): boolean {
  return !at || now.getTime() - at.getTime() >= USAGE_WRITE_INTERVAL_MS;
}

/** Records use (and success) of a token, at most once a minute each, so most requests write nothing. */
export async function recordTokenUse(
  db: Kysely<DB>,
  token: AuthenticatedToken,
  succeeded: boolean,
  now: Date,
): Promise<void> {
  const set: { last_used_at?: Date; last_success_at?: Date } = {};
  if (stale(token.lastUsedAt, now)) set.last_used_at = now;
  if (succeeded && stale(token.lastSuccessAt, now)) set.last_success_at = now;
  if (Object.keys(set).length === 0) return;
  await db
    .updateTable('scim_tokens')
    .set(set)
    .where('org_id', '=', token.org.id)
    .where('id', '=', token.tokenId)
    .execute();
}
