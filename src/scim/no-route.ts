// The end of the SCIM chain, reached when no route took the request: 405 when another method would
// have, else 404, as SCIM errors.
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { checkRoute, type RouteCheck } from '../http/route-check.js';
import { MethodNotAllowedError, NotFoundError, type ScimError } from '../http/scim-errors.js';
import type { ScimState } from '../resources/scim-state.js';

/** `url`: the address asked for, absolute. */
export function noRouteError(route: RouteCheck, method: string, url: string): ScimError {
  return route.kind === 'methodNotAllowed'
    ? new MethodNotAllowedError(method, route.allowed)
    : new NotFoundError(`No SCIM endpoint at ${url}`);
}

export function noRoute(router: Router<ScimState>): Middleware<ScimState> {
  return (ctx) => {
    const route = checkRoute(router, ctx.path, ctx.method);
    throw noRouteError(route, ctx.method, ctx.state.baseUrl + ctx.path);
  };
}
