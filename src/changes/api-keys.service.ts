// Read-only API keys for the product, which read the change feed: created with their secret shown
// once, listed, revoked (which ends their long polls), and checked.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { DB } from '../db/tables.js';
import { isStorableText, UNSTORABLE_TEXT_MESSAGE } from '../db/text.js';
import { notFound } from '../http/admin-errors.js';
import { parseBody } from '../http/parse-body.js';
import {
  API_KEY_PREFIX,
  generateSecret,
  hashMatches,
  hashSecret,
  looksLikeSecret,
  secretPrefix,
} from '../secrets.js';
import * as keysRepo from './api-keys.repository.js';
import type { ChangeFeed } from './change-feed.js';

const createKeyBody = z.strictObject({
  name: z.string().refine(isStorableText, UNSTORABLE_TEXT_MESSAGE).pipe(z.string().trim().min(1).max(200)),
});

function renderApiKey(key: keysRepo.StoredApiKey) {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    scope: 'changes:read',
    createdAt: key.createdAt.toISOString(),
    revokedAt: key.revokedAt?.toISOString() ?? null,
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
  };
}

/** A new key; its secret is returned here and never again (only its SHA-256 is stored). */
export async function createApiKey(db: Kysely<DB>, body: unknown) {
  const input = parseBody(createKeyBody, body);
  const secret = generateSecret(API_KEY_PREFIX);
  const key = await keysRepo.insertApiKey(
    db,
    {
      id: randomUUID(),
      name: input.name,
      prefix: secretPrefix(secret, API_KEY_PREFIX),
      secretHash: hashSecret(secret),
    },
    new Date(),
  );
  return { ...renderApiKey(key), key: secret };
}

export async function listApiKeys(db: Kysely<DB>) {
  return { apiKeys: (await keysRepo.listApiKeys(db)).map(renderApiKey) };
}

/** Revokes a key: from now on it reads nothing, and its long polls here end at once. */
export async function revokeApiKey(db: Kysely<DB>, feed: Pick<ChangeFeed, 'readerRevoked'>, id: string) {
  const key = await keysRepo.revokeApiKey(db, id, new Date());
  if (!key) throw notFound(`API key ${id} not found`);
  feed.readerRevoked(key.id);
  return renderApiKey(key);
}

/** The id of the key `secret` is, when it is a key that has not been revoked. */
export async function checkApiKey(db: Kysely<DB>, secret: string): Promise<string | undefined> {
  if (!looksLikeSecret(secret, API_KEY_PREFIX)) return undefined;
  const presented = hashSecret(secret);
  const candidates = await keysRepo.apiKeysWithPrefix(db, secretPrefix(secret, API_KEY_PREFIX));
  const key = candidates.find((c) => hashMatches(presented, c.secretHash));
  if (!key || key.revoked) return undefined;
  return key.id;
}

export const touchApiKey = (db: Kysely<DB>, id: string) => keysRepo.touchApiKey(db, id, new Date());
