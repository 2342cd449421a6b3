// The HTTP side of metrics: every request's duration under its route template, and /metrics itself,
// which answers only the admin token (it tells how busy each webhook endpoint is).
import type { Context, Middleware } from 'koa';
import { bearerToken, secretMatcher } from '../http/bearer.js';
import { isScimPath } from '../http/scim-path.js';
import type { Metrics } from './metrics.js';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const FIXED_ROUTES = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * The route a request matched, as its router declares it (`/scim/v2/:orgId/Users/:id`); `unmatched`
 * for any path no route serves, so that no client can make up label values.
 */
function routeOf(ctx: Context): string {
  // @koa/router's documented ctx.routerPath: the matched route's path.
  const matched = (ctx as { routerPath?: string }).routerPath;
  if (isScimPath(ctx.path)) return `/scim/v2/:orgId${matched ?? '/unmatched'}`;
  if (matched) return matched;
  return FIXED_ROUTES.has(ctx.path) ? ctx.path : 'unmatched';
}

export function measureRequests(metrics: Metrics): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const method = METHODS.has(ctx.method) ? ctx.method : '_OTHER';
      metrics.requestDone(method, routeOf(ctx), ctx.status, (performance.now() - started) / 1000);
    }
  };
}

export function metricsEndpoint(metrics: Metrics, adminToken: string): Middleware {
  const isAdmin = secretMatcher(adminToken);
  return async (ctx, next) => {
    if (ctx.path !== '/metrics') return next();
    if (!isAdmin(bearerToken(ctx.get('authorization')))) {
      ctx.status = 401;
      ctx.set('WWW-Authenticate', 'Bearer realm="scimd-admin"');
      ctx.body = { error: { code: 'unauthorized', message: 'The admin token is missing or wrong' } };
      return;
    }
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.status = 405;
      ctx.set('Allow', 'GET, HEAD');
      return;
    }
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  };
}
