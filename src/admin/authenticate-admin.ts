// Who calls the admin API: the admin token (the actor `admin`), or a product's API key, which may
// read the change feed and nothing else. Anything else is 401.

import type { Middleware } from 'koa';
import type { Kysely } from 'kysely';
import { checkApiKey, touchApiKey } from '../changes/api-keys.service.js';
import type { DB } from '../db/tables.js';
import { AdminError } from '../http/admin-errors.js';
import { bearerToken, secretMatcher } from '../http/bearer.js';
import type { RouteState as AdminState } from '../http/route-state.js';
import type { Logger } from '../log.js';

/** What an API key may do: read the change feed. */
const FEED_PATH = /^\/admin\/v1\/changes\/?$/;

export function authenticateAdmin(
  db: Kysely<DB>,
  adminToken: string,
  logger: Logger,
): Middleware<AdminState> {
  const isAdminToken = secretMatcher(adminToken);
  return async (ctx, next) => {
    const presented = bearerToken(ctx.get('authorization'));
    if (isAdminToken(presented)) {
      ctx.state.actor = 'admin';
      return next();
    }
    const apiKey = presented ? await checkApiKey(db, presented) : undefined;
    if (!apiKey) {
      throw new AdminError(401, 'unauthorized', 'The admin token or API key is missing or wrong', {
        'WWW-Authenticate': 'Bearer realm="scimd-admin"',
      });
    }
    if (!(ctx.method === 'GET' && FEED_PATH.test(ctx.path)))
      throw new AdminError(
        403,
        'forbidden',
        'An API key may only read the change feed (GET /admin/v1/changes)',
      );
    ctx.state.actor = `api_key:${apiKey}`;
    ctx.state.apiKey = apiKey;
    touchApiKey(db, apiKey).catch((err) =>
      logger.warn({ err, requestId: ctx.state.requestId }, 'could not record the use of an API key'),
    );
    await next();
  };
}
