import type { RouterMiddleware } from '@koa/router';
import type { TokenScope } from '../db/tables.js';
import { ForbiddenError } from '../http/scim-errors.js';
import type { ScimState } from './scim-state.js';

/** A token limited to Users or Groups is refused elsewhere. */
export function requireScope(scope: TokenScope): RouterMiddleware<ScimState> {
  return async (ctx, next) => {
    if (!ctx.state.scopes.includes(scope)) {
      throw new ForbiddenError(
        `This token is not allowed to access ${scope === 'users' ? 'Users' : 'Groups'}`,
        'scope_missing',
      );
    }
    await next();
  };
}
