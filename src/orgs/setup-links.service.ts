// Setup links: what an operator sends a customer's IT admin so they can connect Okta or Entra alone
// (the console's setup pages). The admin API, the CLI and the console create and revoke them here.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { DB } from '../db/tables.js';
import { isStorableText, UNSTORABLE_TEXT_MESSAGE } from '../db/text.js';
import { notFound } from '../http/admin-errors.js';
import { parseBody } from '../http/parse-body.js';
import { generateSecret, hashSecret, SETUP_LINK_PREFIX, secretPrefix } from '../secrets.js';
import { getOrg } from './orgs.service.js';
import * as repo from './setup-links.repository.js';

/** A link's life unless the operator says otherwise, and the longest it may have. */
export const SETUP_LINK_HOURS = { default: 72, max: 30 * 24 } as const;

const createBody = z.strictObject({
  expiresInHours: z
    .number()
    .int()
    .min(1)
    .max(SETUP_LINK_HOURS.max, `must be at most ${SETUP_LINK_HOURS.max} hours`)
    .optional(),
  note: z
    .string()
    .refine(isStorableText, UNSTORABLE_TEXT_MESSAGE)
    .pipe(z.string().trim().max(200))
    .optional(),
});

export type SetupLinkView = ReturnType<typeof renderSetupLink>;

function renderSetupLink(link: repo.StoredSetupLink, now = new Date()) {
  const state = link.revokedAt ? 'revoked' : link.expiresAt <= now ? 'expired' : 'active';
  return {
    id: link.id,
    orgId: link.orgId,
    prefix: link.prefix,
    note: link.note,
    state,
    createdBy: link.createdBy,
    createdAt: link.createdAt.toISOString(),
    expiresAt: link.expiresAt.toISOString(),
    revokedAt: link.revokedAt?.toISOString() ?? null,
    lastOpenedAt: link.lastOpenedAt?.toISOString() ?? null,
  };
}

/** Where a link's secret is opened; the console exchanges it for a session and never shows it again. */
const setupLinkUrl = (publicUrl: string, secret: string) => `${publicUrl}/console/link/${secret}`;

/** A new link for the organization; its URL is returned here and never again (only its hash is kept). */
export async function createSetupLink(
  db: Kysely<DB>,
  orgId: string,
  body: unknown,
  { publicUrl, createdBy }: { publicUrl: string; createdBy: string },
) {
  const input = parseBody(createBody, body);
  await getOrg(db, orgId);
  const now = new Date();
  const secret = generateSecret(SETUP_LINK_PREFIX);
  const link = await repo.insertSetupLink(db, {
    id: randomUUID(),
    orgId,
    prefix: secretPrefix(secret, SETUP_LINK_PREFIX),
    secretHash: hashSecret(secret),
    note: input.note ?? '',
    createdBy,
    createdAt: now,
    expiresAt: new Date(now.getTime() + (input.expiresInHours ?? SETUP_LINK_HOURS.default) * 3_600_000),
  });
  return { ...renderSetupLink(link, now), url: setupLinkUrl(publicUrl, secret) };
}

export async function listSetupLinks(db: Kysely<DB>, orgId: string) {
  await getOrg(db, orgId);
  const now = new Date();
  return { setupLinks: (await repo.listSetupLinks(db, orgId)).map((l) => renderSetupLink(l, now)) };
}

/** Revokes a link at once: it no longer opens, and the sessions opened from it end. */
export async function revokeSetupLink(db: Kysely<DB>, orgId: string, id: string) {
  await getOrg(db, orgId);
  const link = await repo.revokeSetupLink(db, orgId, id, new Date());
  if (!link) throw notFound(`Setup link ${id} not found`);
  return renderSetupLink(link);
}
