// An organization's SCIM tokens, as the admin API, the console and the CLI see them: created with the
// secret shown once, listed, rotated in the order an IdP allows, revoked.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { DB, TokenScope } from '../db/tables.js';
import { isStorableText, UNSTORABLE_TEXT_MESSAGE } from '../db/text.js';
import { AdminError, invalidRequest, notFound } from '../http/admin-errors.js';
import { parseBody } from '../http/parse-body.js';
import { generateSecret, hashSecret, secretPrefix } from '../secrets.js';
import { getOrg } from './orgs.service.js';
import * as tokensRepo from './tokens.repository.js';

const TOKEN_SCOPES = ['users', 'groups'] as const;
const storableText = z.string().refine(isStorableText, UNSTORABLE_TEXT_MESSAGE);
const rotateTokenBody = z.strictObject({
  overlapSeconds: z
    .number()
    .int()
    .min(0)
    .max(90 * 86_400, 'must be at most 90 days')
    .optional(),
});
const revokeTokenBody = z.strictObject({ force: z.boolean().optional() });
const createTokenBody = z.strictObject({
  name: storableText.pipe(z.string().trim().min(1).max(200)).optional(),
  scopes: z
    .array(z.enum(TOKEN_SCOPES))
    .min(1, 'must name at least one of users, groups')
    .refine((s) => new Set(s).size === s.length, 'must not repeat a scope')
    .optional(),
  expiresAt: z.iso.datetime({ offset: true }).optional(),
});

export function renderToken(token: tokensRepo.StoredToken) {
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  return {
    id: token.id,
    name: token.name,
    scopes: token.scopes,
    prefix: token.prefix,
    createdAt: token.createdAt.toISOString(),
    expiresAt: iso(token.expiresAt),
    revokedAt: iso(token.revokedAt),
    lastUsedAt: iso(token.lastUsedAt),
    lastSuccessAt: iso(token.lastSuccessAt),
    replaces: token.replaces,
    replacedBy: token.replacedBy,
  };
}

/** Creates a token; the secret is returned here and never again (only its SHA-256 is stored). */
export async function createToken(
  db: Kysely<DB>,
  orgId: string,
  body: unknown,
): Promise<{ token: tokensRepo.StoredToken; secret: string }> {
  const input = parseBody(createTokenBody, body);
  await getOrg(db, orgId);
  const now = new Date();
  const expiresAt = input.expiresAt ? new Date(input.expiresAt) : null;
  if (expiresAt && expiresAt <= now) throw invalidRequest('expiresAt: must be in the future');
  const secret = generateSecret();
  const token = await tokensRepo.insertToken(
    db,
    orgId,
    {
      id: randomUUID(),
      name: input.name ?? `token ${now.toISOString()}`,
      scopes: [...(input.scopes ?? TOKEN_SCOPES)] as TokenScope[],
      prefix: secretPrefix(secret),
      secretHash: hashSecret(secret),
      expiresAt,
    },
    now,
  );
  return { token, secret };
}

async function getToken(db: Kysely<DB>, orgId: string, tokenId: string): Promise<tokensRepo.StoredToken> {
  await getOrg(db, orgId);
  const token = await tokensRepo.findToken(db, orgId, tokenId, { forUpdate: true });
  if (!token) throw notFound(`Token ${tokenId} not found`);
  return token;
}

const conflict = (message: string) => new AdminError(409, 'conflict', message);

/**
 * Rotation, in the order an IdP allows it (configure the replacement, confirm a successful
 * synchronization, then revoke the old token): a new token with the same name, scopes and lifetime. The old one keeps
 * working until it is revoked, or for `overlapSeconds` when given, after which it expires.
 */
export async function rotateToken(
  db: Kysely<DB>,
  orgId: string,
  tokenId: string,
  body: unknown,
): Promise<{ token: tokensRepo.StoredToken; secret: string }> {
  const input = parseBody(rotateTokenBody, body);
  const old = await getToken(db, orgId, tokenId);
  const now = new Date();
  if (old.revokedAt) throw conflict(`Token ${tokenId} is revoked; create a new token instead`);
  if (old.expiresAt && old.expiresAt <= now)
    throw conflict(`Token ${tokenId} has expired; create a new token instead`);
  if (old.replacedBy)
    throw conflict(`Token ${tokenId} was already rotated; its replacement is ${old.replacedBy}`);
  const lifetime = old.expiresAt ? old.expiresAt.getTime() - old.createdAt.getTime() : undefined;
  const secret = generateSecret();
  const token = await tokensRepo.insertToken(
    db,
    orgId,
    {
      id: randomUUID(),
      name: old.name,
      scopes: old.scopes,
      prefix: secretPrefix(secret),
      secretHash: hashSecret(secret),
      expiresAt: lifetime ? new Date(now.getTime() + lifetime) : null,
      replaces: old.id,
    },
    now,
  );
  const overlapEnd =
    input.overlapSeconds !== undefined ? new Date(now.getTime() + input.overlapSeconds * 1000) : undefined;
  const expiresAt = overlapEnd && (!old.expiresAt || overlapEnd < old.expiresAt) ? overlapEnd : undefined;
  await tokensRepo.updateToken(db, orgId, old.id, {
    replacedBy: token.id,
    ...(expiresAt ? { expiresAt } : {}),
  });
  return { token, secret };
}

/**
 * Revokes a token at once. A token that was rotated is kept until its replacement has served a
 * successful request, so an IdP is never left without a working token, unless `force` says so.
 */
export async function revokeToken(
  db: Kysely<DB>,
  orgId: string,
  tokenId: string,
  body: unknown,
): Promise<tokensRepo.StoredToken> {
  const input = parseBody(revokeTokenBody, body);
  const token = await getToken(db, orgId, tokenId);
  if (token.revokedAt) return token;
  if (token.replacedBy && !input.force) {
    const replacement = await tokensRepo.findToken(db, orgId, token.replacedBy);
    if (replacement && !replacement.lastSuccessAt && !replacement.revokedAt) {
      throw conflict(
        `Token ${tokenId} was replaced by ${token.replacedBy}, which has not served a successful request yet: ` +
          'point the IdP at the new token and run a synchronization first, or revoke with force',
      );
    }
  }
  return tokensRepo.updateToken(db, orgId, tokenId, { revokedAt: new Date() });
}

export async function listTokens(db: Kysely<DB>, orgId: string): Promise<tokensRepo.StoredToken[]> {
  await getOrg(db, orgId);
  return tokensRepo.listTokens(db, orgId);
}
