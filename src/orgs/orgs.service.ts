// Organizations and their SCIM tokens, as the admin API and the CLI see them.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { listAudit } from '../audit/audit.repository.js';
import type { DB, TokenScope } from '../db/tables.js';
import { isStorableText, UNSTORABLE_TEXT_MESSAGE, unstorableAt } from '../db/text.js';
import { AdminError, invalidRequest, notFound } from '../http/admin-errors.js';
import { generateSecret, hashSecret, secretPrefix } from '../secrets.js';
import * as orgsRepo from './orgs.repository.js';
import * as tokensRepo from './tokens.repository.js';

const DEPROVISIONING_MODES = ['deactivate', 'anonymize', 'delete'] as const;
const TOKEN_SCOPES = ['users', 'groups'] as const;

const storableText = z.string().refine(isStorableText, UNSTORABLE_TEXT_MESSAGE);
const orgName = storableText.pipe(z.string().trim().min(1, 'must not be empty').max(200));
const createOrgBody = z.strictObject({
  name: orgName,
  groupSync: z.boolean().optional(),
  deprovisioning: z.enum(DEPROVISIONING_MODES).optional(),
});
const updateOrgBody = z
  .strictObject({
    name: orgName.optional(),
    groupSync: z.boolean().optional(),
    deprovisioning: z.enum(DEPROVISIONING_MODES).optional(),
  })
  .refine((b) => Object.keys(b).length > 0, 'name, groupSync or deprovisioning is required');
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

/** Refuses a body or query with text Postgres cannot store, wherever it is, naming where. */
export function refuseUnstorable(body: unknown): void {
  const at = unstorableAt(body);
  if (at !== undefined)
    throw invalidRequest(at ? `${at}: ${UNSTORABLE_TEXT_MESSAGE}` : UNSTORABLE_TEXT_MESSAGE);
}

export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  refuseUnstorable(body);
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = issue.path.join('.');
  throw invalidRequest(field ? `${field}: ${issue.message}` : issue.message);
}

export interface OrgView {
  id: string;
  name: string;
  scimBaseUrl: string;
  groupSync: boolean;
  deprovisioning: string;
  createdAt: string;
  updatedAt: string;
}

export function renderOrg(org: orgsRepo.StoredOrg, publicUrl: string): OrgView {
  return {
    id: org.id,
    name: org.name,
    scimBaseUrl: `${publicUrl}/scim/v2/${org.id}`,
    groupSync: org.groupSync,
    deprovisioning: org.deprovisioning,
    createdAt: org.createdAt.toISOString(),
    updatedAt: org.updatedAt.toISOString(),
  };
}

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

export async function createOrg(db: Kysely<DB>, body: unknown): Promise<orgsRepo.StoredOrg> {
  const input = parseBody(createOrgBody, body);
  return orgsRepo.insertOrg(
    db,
    {
      id: randomUUID(),
      name: input.name,
      groupSync: input.groupSync ?? false,
      deprovisioning: input.deprovisioning ?? 'deactivate',
    },
    new Date(),
  );
}

export async function getOrg(db: Kysely<DB>, id: string): Promise<orgsRepo.StoredOrg> {
  const org = await orgsRepo.findOrg(db, id);
  if (!org) throw notFound(`Organization ${id} not found`);
  return org;
}

export const listOrgs = orgsRepo.listOrgs;

export async function updateOrg(db: Kysely<DB>, id: string, body: unknown): Promise<orgsRepo.StoredOrg> {
  const input = parseBody(updateOrgBody, body);
  const org = await orgsRepo.updateOrg(db, id, input, new Date());
  if (!org) throw notFound(`Organization ${id} not found`);
  return org;
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

export async function deleteOrg(db: Kysely<DB>, id: string): Promise<void> {
  if (!(await orgsRepo.deleteOrg(db, id))) throw notFound(`Organization ${id} not found`);
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

const eventsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).optional(),
  cursor: z
    .string()
    .regex(/^\d{1,19}$/, 'is not a cursor from this API')
    // Event ids are Postgres bigints: a larger number cannot be one.
    .refine(
      (c) => !/^\d+$/.test(c) || BigInt(c) <= 9_223_372_036_854_775_807n,
      'is not a cursor from this API',
    )
    .optional(),
  resourceId: z.string().min(1).max(200).optional(),
  since: z.iso.datetime({ offset: true }).optional(),
  until: z.iso.datetime({ offset: true }).optional(),
});

/** The organization's audit log, newest first, 50 a page unless `limit` says otherwise. */
export async function listEvents(db: Kysely<DB>, orgId: string, query: unknown) {
  const input = parseBody(eventsQuery, query);
  await getOrg(db, orgId);
  const { events, nextBefore } = await listAudit(db, orgId, {
    limit: input.limit ?? 50,
    before: input.cursor,
    resourceId: input.resourceId,
    since: input.since ? new Date(input.since) : undefined,
    until: input.until ? new Date(input.until) : undefined,
  });
  return { events, nextCursor: nextBefore ?? null };
}
