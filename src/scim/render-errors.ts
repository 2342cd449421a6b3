// Every failure of a SCIM request as a SCIM error (RFC 7644 §3.12), as the one classifier
// (http/failure.ts) answers it: its own status and scimType, a database failure as 503 with
// Retry-After, anything else as a 500 that echoes nothing.
import type { Middleware } from 'koa';
import { classifyFailure, scimErrorOf } from '../http/failure.js';
import { SCIM_CONTENT_TYPE } from '../http/respond.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics/metrics.js';
import type { ScimState } from '../resources/scim-state.js';

/** The error is also kept in the state, for what after-answer.ts records of the request. */
export function renderScimErrors(
  logger: Logger,
  metrics: Pick<Metrics, 'databaseFailure'>,
): Middleware<ScimState> {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const failure = classifyFailure(error, {
        logger,
        metrics,
        requestId: ctx.state.requestId,
        surface: 'SCIM',
      });
      const scimError = scimErrorOf(failure);
      ctx.state.failure = scimError;
      ctx.status = scimError.status;
      for (const [name, value] of Object.entries(scimError.headers)) ctx.set(name, value);
      ctx.body = scimError.toJSON(ctx.state.requestId);
      ctx.type = SCIM_CONTENT_TYPE;
    }
  };
}
