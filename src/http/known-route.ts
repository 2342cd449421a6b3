// Answers a path no route takes (404) or a method it does not (405, with Allow) before anything
// reads the body, in the surface's error format.
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { checkRoute } from './route-check.js';

export interface UnknownRoute {
  notFound(path: string): Error;
  methodNotAllowed(method: string, allowed: readonly string[]): Error;
}

// biome-ignore lint/suspicious/noExplicitAny: any router's routes, whatever state they carry.
export function knownRoute(router: Router<any, any>, errors: UnknownRoute): Middleware {
  return async (ctx, next) => {
    const route = checkRoute(router, ctx.path, ctx.method);
    if (route.kind === 'notFound') throw errors.notFound(ctx.path);
    if (route.kind === 'methodNotAllowed') {
      ctx.set('Allow', route.allowed.join(', '));
      throw errors.methodNotAllowed(ctx.method, route.allowed);
    }
    await next();
  };
}
