import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import { isUuid } from '../db/ids.js';
import { type Logger, requestLogger } from '../log.js';
import { loggedPath } from './logged-path.js';
import { splitScimPath } from './scim-path.js';

const SAFE_REQUEST_ID = /^[\w.:-]{1,128}$/;

/** A path that carries a secret (a setup link's) is logged without it. */
const SECRET_IN_PATH = /^(\/console\/link\/)[^/]+/;

/** Gives each request an id (the client's X-Request-Id when it is sane) and logs one line per request. */
export function requestContext(logger: Logger): Middleware {
  const lines = requestLogger(logger);
  return async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const requestId = SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    const started = performance.now();
    try {
      await next();
    } finally {
      // The path only: query strings can carry filter values (personal data).
      const ms = Math.round((performance.now() - started) * 10) / 10;
      // A SCIM path as loggedPath keeps it: a client may put personal data where an id goes.
      const scim = splitScimPath(ctx.path);
      const path = scim
        ? `/scim/v2/${isUuid(scim.organization) ? scim.organization : '…'}${scim.rest ? loggedPath(scim.rest) : ''}`
        : ctx.path.replace(SECRET_IN_PATH, '$1[redacted]');
      lines.info({ requestId, method: ctx.method, path, status: ctx.status, ms }, 'request');
    }
  };
}
