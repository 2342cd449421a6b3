// What a SCIM request records once its answer is settled, outside its transaction, and which nothing
// here may change: its sync activity and metrics (aggregated in the process), the use of its token
// (at most once a minute), and the audit entry of a write answered with a failure (one that succeeded
// was recorded with its change: audit/audited-write.ts). A write that succeeded tells the change
// feed, which numbers its changes soon after.
import type { Middleware } from 'koa';
import type { AuditEntry } from '../audit/audit.js';
import type { AuditLog } from '../audit/audit-log.js';
import { writeEntry } from '../audit/audited-write.js';
import type { ChangeFeed } from '../changes/change-feed.js';
import type { SyncActivity } from '../health/sync-activity.js';
import { UnauthorizedError } from '../http/scim-errors.js';
import { outcomeOf, redactedDetail, scimOperationOf } from '../http/scim-operation.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics/metrics.js';
import { recordTokenUse } from '../orgs/scim-auth.js';
import type { ScimState } from '../resources/scim-state.js';
import { namesOf, standardRegistry } from '../schema/registry.js';

export interface AfterAnswerDeps {
  readonly audit: AuditLog;
  readonly logger: Logger;
  readonly changes: Pick<ChangeFeed, 'written'>;
  readonly activity: Pick<SyncActivity, 'record'>;
  readonly metrics: Pick<Metrics, 'scimOperation'>;
}

export function recordAfterAnswer({
  audit,
  logger,
  changes,
  activity,
  metrics,
}: AfterAnswerDeps): Middleware<ScimState> {
  const logUnwritten = (entry: AuditEntry, err?: unknown) =>
    logger.error({ err, audit: entry, requestId: entry.requestId }, 'could not write an audit entry');

  return async (ctx, next) => {
    await next();
    const state = ctx.state;
    const succeeded = ctx.status < 400;
    if (state.write && succeeded) changes.written();
    const { failure } = state;
    const operation = scimOperationOf(ctx.method, ctx.path);
    const outcome = outcomeOf(ctx.status);
    metrics.scimOperation(operation, outcome);
    activity.record({
      orgId: state.orgId,
      tokenId:
        state.token?.tokenId ?? (failure instanceof UnauthorizedError ? failure.tokenId : undefined) ?? null,
      operation,
      outcome,
      method: ctx.method,
      path: ctx.path,
      status: ctx.status,
      scimType: failure?.scimType,
      reason: failure?.reason,
      detail:
        failure &&
        redactedDetail(failure.message, {
          path: ctx.path,
          query: ctx.query,
          body: ctx.request.body,
          names: namesOf(state.registry ?? standardRegistry),
        }),
      requestId: state.requestId,
      at: new Date(),
    });
    if (!state.token) {
      // The database failed before the token could be checked: its actor is unknown.
      if (state.write && ctx.status === 503)
        logUnwritten(writeEntry(state, state.orgId, 'unverified token', 503));
      return;
    }
    const tokenUse = recordTokenUse(state.db, state.token, succeeded, new Date())?.catch((err) =>
      logger.warn({ err, requestId: state.requestId }, 'could not record the use of a token'),
    );
    const failedWrite =
      state.write && !succeeded
        ? audit.record(writeEntry(state, state.org.id, `token:${state.token.tokenId}`, ctx.status))
        : undefined;
    // A read that records nothing (nearly every one) finishes here without waiting on anything.
    if (tokenUse || failedWrite) await Promise.all([tokenUse, failedWrite]);
  };
}
