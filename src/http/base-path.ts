// Where scimd is reached below its origin: PUBLIC_URL's path (`https://app.example/identity`), when
// scimd sits behind a proxy under a path or is mounted inside another app (createScimd).
import type { Middleware } from 'koa';

/** PUBLIC_URL's path without its trailing slash: '' when scimd is at the origin's root. */
export function basePathOf(publicUrl: string): string {
  return new URL(publicUrl).pathname.replace(/\/+$/, '');
}

/** The paths scimd answers below its base path. */
const OWN_PATHS = /^\/(scim|admin|console|healthz|readyz|metrics)(\/|\?|$)/;

/**
 * `url` (a request's path and query) as scimd routes it: without the base path. undefined when the
 * request is not for scimd: outside the base path, or (at the root) none of scimd's own paths.
 */
export function pathWithinBase(url: string, basePath: string): string | undefined {
  if (basePath === '') return OWN_PATHS.test(url) ? url : undefined;
  if (!url.startsWith(basePath)) return undefined;
  const rest = url.slice(basePath.length);
  if (rest === '' || rest.startsWith('?')) return `/${rest}`;
  return rest.startsWith('/') ? rest : undefined;
}

/** Redirects name the path a browser reaches scimd at: the base path before scimd's own. */
export function prefixLocations(basePath: string): Middleware {
  return async (ctx, next) => {
    await next();
    const location: unknown = ctx.response.get('Location');
    if (typeof location === 'string' && location.startsWith('/') && !location.startsWith('//'))
      ctx.set('Location', basePath + location);
  };
}
