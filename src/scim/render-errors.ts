// Every failure of a SCIM request as a SCIM error (RFC 7644 §3.12): its own status and scimType; a
// database failure as 503 with Retry-After; anything else as a 500 that echoes nothing.
import type { Middleware } from 'koa';
import { databaseFailure, failureFields, isUnstorableTextError } from '../db/failures.js';
import { UNSTORABLE_TEXT_MESSAGE } from '../db/text.js';
import { SCIM_CONTENT_TYPE } from '../http/respond.js';
import { InvalidValueError, NotFoundError, ScimError, ServiceUnavailableError } from '../http/scim-errors.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics/metrics.js';
import type { ScimState } from './state.js';

/** The keys from what a SCIM write creates to its organization. */
const ORG_KEYS: ReadonlySet<string> = new Set([
  'users_org_id_fkey',
  'groups_org_id_fkey',
  'org_counts_org_id_fkey',
]);

function scimErrorOf(
  error: unknown,
  logger: Logger,
  metrics: Pick<Metrics, 'databaseFailure'>,
  requestId: string,
): ScimError {
  if (error instanceof ScimError) return error;
  // A create that raced the deletion of its organization.
  if (ORG_KEYS.has((error as { constraint?: unknown })?.constraint as string))
    return new NotFoundError('This organization no longer exists');
  if (isUnstorableTextError(error)) return new InvalidValueError(`A value ${UNSTORABLE_TEXT_MESSAGE}`);
  const failure = databaseFailure(error);
  if (failure) {
    metrics.databaseFailure(failure.kind);
    logger.warn({ ...failureFields(error, failure), requestId }, 'database failure in SCIM request');
    return new ServiceUnavailableError(failure.detail, failure.retryAfterSeconds);
  }
  logger.error({ err: error, requestId }, 'unhandled error in SCIM request');
  return new ScimError(500, 'The service provider failed to process the request');
}

/** The error is also kept in the state, for what after-answer.ts records of the request. */
export function renderScimErrors(
  logger: Logger,
  metrics: Pick<Metrics, 'databaseFailure'>,
): Middleware<ScimState> {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const scimError = scimErrorOf(error, logger, metrics, ctx.state.requestId);
      ctx.state.failure = scimError;
      ctx.status = scimError.status;
      for (const [name, value] of Object.entries(scimError.headers)) ctx.set(name, value);
      ctx.body = scimError.toJSON(ctx.state.requestId);
      ctx.type = SCIM_CONTENT_TYPE;
    }
  };
}
