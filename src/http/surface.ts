// What the SCIM and admin surfaces share before a route runs: asking the router whether the path and
// method exist (to answer 404 or 405 in each surface's own error format), and reading a JSON body.
import { bodyParser } from '@koa/bodyparser';
import type Router from '@koa/router';
import type { Context } from 'koa';

export type RouteCheck =
  | { readonly kind: 'matched' }
  | { readonly kind: 'notFound' }
  | { readonly kind: 'methodNotAllowed'; readonly allowed: readonly string[] };

// biome-ignore lint/suspicious/noExplicitAny: a check that reads routes, whatever state type they carry.
export function checkRoute(router: Router<any>, path: string, method: string): RouteCheck {
  const matched = router.match(path, method);
  if (matched.route) return { kind: 'matched' };
  // Layers without methods are the router's own middleware (router.use), not routes.
  const allowed = [...new Set(matched.path.flatMap((layer) => layer.methods))];
  return allowed.length === 0 ? { kind: 'notFound' } : { kind: 'methodNotAllowed', allowed };
}

export const BODY_LIMIT = '1mb';
export const BODY_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH']);

export type BodyFailure = 'tooLarge' | 'invalidJson';

/**
 * Reads a JSON body into ctx.request.body. A body sent without any Content-Type is read as JSON
 * rather than refused. Returns why the body could not be read, if it could not.
 */
export function jsonBodyReader(): (ctx: Context) => Promise<BodyFailure | undefined> {
  const parse = bodyParser({
    enableTypes: ['json'],
    jsonLimit: BODY_LIMIT,
    encoding: 'utf-8',
    detectJSON: (ctx) => !ctx.get('content-type'),
  });
  return async (ctx) => {
    try {
      await parse(ctx, async () => {});
      return undefined;
    } catch (error) {
      // co-body reports a body over the limit as 413 and unparsable JSON as 400.
      const status = (error as { status?: number }).status;
      if (status === 413) return 'tooLarge';
      if (status === 400) return 'invalidJson';
      throw error;
    }
  };
}
