// The console's middlewares, one job each, in the order console.ts runs them.
import type { Middleware } from 'koa';
import { AdminError } from '../http/admin-errors.js';
import { type Audience, csrfMatches, type Sessions } from '../sessions/sessions.js';
import type { Brand } from './brand.js';
import type { ConsoleState } from './console-deps.js';
import { sendPage } from './respond.js';
import { errorPage } from './views/layout.js';
import { setupMasthead } from './views/setup.js';

/** No inline script or style, nothing from elsewhere, no framing. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export function securityHeaders(): Middleware {
  return async (ctx, next) => {
    ctx.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    ctx.set('X-Content-Type-Options', 'nosniff');
    // Not no-referrer: with it, browsers send `Origin: null` on same-origin form posts.
    ctx.set('Referrer-Policy', 'same-origin');
    ctx.set('X-Frame-Options', 'DENY');
    await next();
  };
}

/** The attributes a page names one of the console's own paths in (values are escaped: never a quote). */
const OWN_LINK = /\b(href|action|src|data-refresh)="\/console\b/g;

/** Pages link to the path a browser reaches the console at: the base path before `/console`. */
export function prefixLinks(basePath: string): Middleware {
  return async (ctx, next) => {
    await next();
    if (basePath !== '' && typeof ctx.body === 'string' && ctx.response.is('html'))
      ctx.body = ctx.body.replace(OWN_LINK, `$1="${basePath}/console`);
  };
}

/** The console's own script, style and images; every other answer is not to be stored. */
export function serveAssets(serve: (ctx: Parameters<Middleware>[0], name: string) => boolean): Middleware {
  return async (ctx, next) => {
    const asset = /^\/console\/assets\/([\w.-]+)$/.exec(ctx.path);
    if (asset && ctx.method === 'GET' && serve(ctx, asset[1]!)) return;
    ctx.set('Cache-Control', 'no-store');
    await next();
  };
}

/** A form posted from another site is refused before anything else (SameSite=Strict cookies and the CSRF field are the other two guards). */
export function refuseOtherSites(publicUrl: string): Middleware {
  const publicOrigin = new URL(publicUrl).origin;
  return async (ctx, next) => {
    const origin = ctx.get('origin');
    if (
      ctx.method === 'POST' &&
      origin &&
      origin !== publicOrigin &&
      origin !== `${ctx.protocol}://${ctx.host}`
    )
      throw new AdminError(403, 'forbidden', 'This form was posted from another site');
    await next();
  };
}

/** Paths served without a session: the sign-in page, the assets, and a setup link being opened. */
const OPEN_PATHS = /^\/console\/(sign-in|assets\/[\w.-]+|link\/[^/]+)\/?$/;

const audienceOf = (path: string): Audience => (path.startsWith('/console/setup') ? 'setup' : 'operator');

/**
 * The session of the path's audience (an operator's, or a setup link's under /console/setup), whose
 * actor acts; a form must carry the session's CSRF field. Without a session, a setup page says to open
 * the link again, and an operator's goes to the sign-in page.
 */
export function requireSession(sessions: Sessions, brand: Brand): Middleware<ConsoleState> {
  return async (ctx, next) => {
    if (OPEN_PATHS.test(ctx.path)) return next();
    const audience = audienceOf(ctx.path);
    const session = await sessions.read(ctx, audience);
    if (!session) return answerWithoutSession(ctx, audience, brand);
    if (ctx.method === 'POST' && !csrfMatches(session, (ctx.request.body as Record<string, unknown>)?._csrf))
      throw new AdminError(403, 'forbidden', 'The form has expired: reload the page and try again');
    ctx.state.session = session;
    ctx.state.actor = session.actor;
    if (session.setupLink) ctx.state.orgId = session.setupLink.orgId;
    await next();
  };
}

function answerWithoutSession(ctx: Parameters<Middleware>[0], audience: Audience, brand: Brand): void {
  if (audience === 'setup') {
    const why =
      'This page needs a setup link, opened in this browser. The link may have expired or been revoked: ask for a new one.';
    sendPage(ctx, errorPage(401, why, '/console/setup', undefined, setupMasthead(brand, false)), 401);
  } else if (ctx.method === 'GET') {
    ctx.redirect('/console/sign-in');
  } else {
    sendPage(ctx, errorPage(401, 'Your session has ended: sign in again.', '/console/sign-in'), 401);
  }
}
