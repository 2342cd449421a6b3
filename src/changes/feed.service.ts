import type { Kysely } from 'kysely';
import { z } from 'zod';
import { isUuid } from '../db/ids.js';
import type { DB } from '../db/tables.js';
import { AdminError } from '../http/admin-errors.js';
import { parseBody } from '../http/parse-body.js';
import { type Query, queryValue } from '../http/query.js';
import * as keysRepo from './api-keys.repository.js';
import { type ChangeFeed, CursorAheadError, CursorExpiredError, ReaderRevokedError } from './change-feed.js';
import { CHANGE_TYPES, type ChangeType, isChangeType, pageJson } from './changes.js';

const MAX_WAIT_SECONDS = 30;
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;

const changesQuery = z.object({
  after: z
    .string()
    .regex(/^\d{1,18}$/, 'is not a cursor from this feed')
    .optional(),
  orgId: z.string().refine(isUuid, 'is not an organization id').optional(),
  types: z
    .string()
    .transform((list) =>
      list
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean),
    )
    .superRefine((types, ctx) => {
      if (types.length === 0) ctx.addIssue({ code: 'custom', message: 'must name at least one type' });
      const unknown = types.find((t) => !isChangeType(t));
      if (unknown !== undefined)
        ctx.addIssue({
          code: 'custom',
          message: `unknown type ${unknown}; the types are ${CHANGE_TYPES.join(', ')}`,
        });
    })
    .optional(),
  limit: z.coerce.number().int().min(1).max(MAX_LIMIT).optional(),
  wait: z.coerce
    .number()
    .min(0)
    .max(MAX_WAIT_SECONDS, `must be at most ${MAX_WAIT_SECONDS} seconds`)
    .optional(),
});

/**
 * A read of the feed from the query of `GET /admin/v1/changes`, as the JSON text of the page. Read with
 * an API key (`apiKey`), a long poll answers nothing written after the key's revocation.
 */
export async function readChanges(
  db: Kysely<DB>,
  feed: ChangeFeed,
  query: Query,
  options: { signal?: AbortSignal; apiKey?: string | undefined } = {},
): Promise<string> {
  // A parameter given twice arrives as an array: the first counts.
  const first = Object.fromEntries(Object.keys(query).map((name) => [name, queryValue(query, name)]));
  const input = parseBody(changesQuery, first);
  try {
    const page = await feed.read({
      after: input.after === undefined ? undefined : BigInt(input.after),
      filter: { orgId: input.orgId?.toLowerCase(), types: input.types as ChangeType[] | undefined },
      limit: input.limit ?? DEFAULT_LIMIT,
      waitMs: (input.wait ?? 0) * 1000,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.apiKey
        ? { reader: options.apiKey, stillAllowed: () => keysRepo.apiKeyIsLive(db, options.apiKey!) }
        : {}),
    });
    return pageJson(page);
  } catch (error) {
    if (error instanceof ReaderRevokedError) {
      throw new AdminError(401, 'unauthorized', 'The API key was revoked', {
        'WWW-Authenticate': 'Bearer realm="scimd-admin"',
      });
    }
    if (error instanceof CursorAheadError) {
      throw new AdminError(
        400,
        'invalid_request',
        `after: ${input.after} is past the end of this feed (its last position is ${error.last}): give a nextCursor or a change's cursor this feed answered, or no cursor to start at the oldest change kept`,
      );
    }
    if (error instanceof CursorExpiredError) {
      throw new AdminError(
        410,
        'cursor_expired',
        'Changes after this cursor are past retention and were removed: resynchronise from the read model, then read the feed without a cursor',
      );
    }
    throw error;
  }
}
