// The admin API's failures as `{error: {code, message, requestId}}`, with the status and headers the
// one classifier (failure.ts) gives them.
import type { Middleware } from 'koa';
import type { Logger } from '../log.js';
import { adminCodeOf, classifyFailure } from './failure.js';

export function renderJsonErrors(
  logger: Logger,
  metrics: { databaseFailure(kind: string): void },
): Middleware<{ requestId: string }> {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const requestId = ctx.state.requestId;
      const failure = classifyFailure(error, { logger, metrics, requestId, surface: 'admin' });
      ctx.status = failure.status;
      for (const [name, value] of Object.entries(failure.headers)) ctx.set(name, value);
      ctx.body = { error: { code: adminCodeOf(failure), message: failure.message, requestId } };
    }
  };
}
