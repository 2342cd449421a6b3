// Whether a router takes a method at a path, asked before the route runs: to answer 404 or 405 in
// the surface's own error format, and to read a body only for a route that exists.
import type Router from '@koa/router';

export type RouteCheck =
  | { readonly kind: 'matched' }
  | { readonly kind: 'notFound' }
  | { readonly kind: 'methodNotAllowed'; readonly allowed: readonly string[] };

// biome-ignore lint/suspicious/noExplicitAny: a check that reads routes, whatever state type they carry.
export function checkRoute(router: Router<any, any>, path: string, method: string): RouteCheck {
  const matched = router.match(path, method);
  if (matched.route) return { kind: 'matched' };
  // Layers without methods are the router's own middleware (router.use), not routes.
  const allowed = [...new Set(matched.path.flatMap((layer) => layer.methods))];
  return allowed.length === 0 ? { kind: 'notFound' } : { kind: 'methodNotAllowed', allowed };
}
