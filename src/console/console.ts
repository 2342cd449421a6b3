// The console under /console: pages rendered here from the same admin services as the admin API,
// for operators (signed in with the admin token) and for IT admins (who opened a setup link).
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { type AuditEntry, resourceTypeOf } from '../audit/audit.js';
import { databaseFailure, failureFields, isUnstorableTextError } from '../db/failures.js';
import { UNSTORABLE_TEXT_MESSAGE } from '../db/text.js';
import { AdminError } from '../http/admin-errors.js';
import { FailureThrottle } from '../http/failure-throttle.js';
import { type Audience, type ConsoleSession, csrfMatches, Sessions } from '../sessions/sessions.js';
import { assetServer } from './assets.js';
import type { Audited, ConsoleDeps, ConsoleState, RecordAction } from './console-deps.js';
import { registerOperatorRoutes } from './operator.routes.js';
import { sendPage } from './respond.js';
import { registerSetupRoutes } from './setup.routes.js';
import { errorPage } from './views/layout.js';
import { operatorNav } from './views/operator.js';

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

/** Wrong sign-ins a client address may make within the window before it must wait. */
const SIGN_IN_THROTTLE = { limit: 5, windowMs: 5 * 60_000 } as const;

/** Paths served without a session: the sign-in page, the assets, and a setup link being opened. */
const OPEN_PATHS = /^\/console\/(sign-in|assets\/[\w.-]+|link\/[^/]+)\/?$/;

export function consoleApp(deps: ConsoleDeps): Middleware {
  const sessions = new Sessions(deps.db, deps.adminToken, deps.publicUrl.startsWith('https:'));
  // Case-sensitive, as the path checks above the router are.
  const router = new Router<ConsoleState>({ prefix: '/console', sensitive: true });
  const signInThrottle = deps.signInThrottle ?? new FailureThrottle(SIGN_IN_THROTTLE);
  const tools = { ...deps, sessions, signInThrottle, ...auditLog(deps) };
  registerOperatorRoutes(router, tools);
  registerSetupRoutes(router, tools);
  const routes = router.routes();
  const serveAsset = assetServer();
  const readForm = bodyParser({ enableTypes: ['form'], formLimit: '64kb', encoding: 'utf-8' });
  const publicOrigin = new URL(deps.publicUrl).origin;

  return async (ctx, next) => {
    if (ctx.path !== '/console' && !ctx.path.startsWith('/console/')) return next();
    ctx.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    ctx.set('X-Content-Type-Options', 'nosniff');
    // Not no-referrer: with it, browsers send `Origin: null` on same-origin form posts.
    ctx.set('Referrer-Policy', 'same-origin');
    ctx.set('X-Frame-Options', 'DENY');
    const asset = /^\/console\/assets\/([\w.-]+)$/.exec(ctx.path);
    if (asset && ctx.method === 'GET' && serveAsset(ctx, asset[1]!)) return;
    ctx.set('Cache-Control', 'no-store');
    const audience: Audience = ctx.path.startsWith('/console/setup') ? 'setup' : 'operator';
    let session: ConsoleSession | undefined;
    try {
      if (ctx.method === 'POST') {
        // A form posted from another site is refused before anything else (SameSite=Strict cookies and
        // the CSRF field are the other two guards).
        const origin = ctx.get('origin');
        if (origin && origin !== publicOrigin && origin !== `${ctx.protocol}://${ctx.host}`)
          throw new AdminError(403, 'forbidden', 'This form was posted from another site');
        await readForm(ctx, async () => {});
      }
      if (!OPEN_PATHS.test(ctx.path)) {
        session = await sessions.read(ctx, audience);
        if (!session) return answerWithoutSession(ctx, audience);
        if (
          ctx.method === 'POST' &&
          !csrfMatches(session, (ctx.request.body as Record<string, unknown>)?._csrf)
        )
          throw new AdminError(403, 'forbidden', 'The form has expired: reload the page and try again');
        ctx.state.session = session;
      }
      await routes(ctx as Parameters<typeof routes>[0], async () => {});
      if (ctx.status === 404 && ctx.body === undefined)
        throw new AdminError(404, 'not_found', `Nothing at ${ctx.path}`);
    } catch (error) {
      const { status, message, headers } = consoleErrorOf(error, deps, ctx.state.requestId);
      for (const [name, value] of Object.entries(headers)) ctx.set(name, value);
      const back =
        audience === 'setup' ? '/console/setup' : ctx.get('referer') ? ctx.get('referer') : '/console';
      const nav = session && audience === 'operator' ? operatorNav(session.csrf) : undefined;
      sendPage(
        ctx,
        errorPage(status, `${message} (request ${ctx.state.requestId})`, safeBack(back), nav),
        status,
      );
    }
  };
}

/** Only a path of this console is a place to go back to. */
const safeBack = (back: string) => {
  const path = back.startsWith('/') ? back : URL.canParse(back) ? new URL(back).pathname : '';
  return path.startsWith('/console') ? path : '/console';
};

function answerWithoutSession(ctx: Context, audience: Audience): void {
  if (audience === 'setup') {
    const why =
      'This page needs a setup link, opened in this browser. The link may have expired or been revoked: ask for a new one.';
    sendPage(ctx, errorPage(401, why, '/console/setup'), 401);
  } else if (ctx.method === 'GET') {
    ctx.redirect('/console/sign-in');
  } else {
    sendPage(ctx, errorPage(401, 'Your session has ended: sign in again.', '/console/sign-in'), 401);
  }
}

function consoleErrorOf(
  error: unknown,
  { logger, metrics }: Pick<ConsoleDeps, 'logger' | 'metrics'>,
  requestId: string,
): { status: number; message: string; headers: Record<string, string> } {
  if (error instanceof AdminError) return { status: error.status, message: error.message, headers: {} };
  if (isUnstorableTextError(error))
    return { status: 400, message: `A value ${UNSTORABLE_TEXT_MESSAGE}`, headers: {} };
  const failure = databaseFailure(error);
  if (failure) {
    metrics.databaseFailure(failure.kind);
    logger.warn({ ...failureFields(error, failure), requestId }, 'database failure in console request');
    return {
      status: 503,
      message: 'The database is unavailable for a moment; try again shortly',
      headers: { 'Retry-After': String(failure.retryAfterSeconds) },
    };
  }
  const status = (error as { status?: number }).status;
  if (status === 413 || status === 400 || status === 415)
    return { status, message: 'The form could not be read', headers: {} };
  logger.error({ err: error, requestId }, 'unhandled error in console request');
  return { status: 500, message: 'The request failed unexpectedly', headers: {} };
}

/** Console actions go to the organization's audit log like the admin API's, failures included. */
function auditLog({ audit, logger }: Pick<ConsoleDeps, 'audit' | 'logger'>): {
  audited: Audited;
  record: RecordAction;
} {
  const record: RecordAction = async (ctx, done) => {
    const entry: AuditEntry = {
      orgId: done.orgId,
      actor: done.actor ?? (ctx.state.session as ConsoleSession).actor,
      action: done.action,
      resourceType: resourceTypeOf(done.action),
      resourceId: done.resourceId,
      status: done.status,
      requestId: ctx.state.requestId,
    };
    try {
      await audit.record(entry);
    } catch (err) {
      logger.error(
        { err, audit: entry, requestId: ctx.state.requestId },
        'could not record a console action',
      );
    }
  };
  const audited: Audited = async (ctx, action, run, idOf) => {
    try {
      const result = await run();
      const created = idOf?.(result);
      await record(ctx, { ...action, resourceId: created ?? action.resourceId, status: created ? 201 : 200 });
      return result;
    } catch (error) {
      if (error instanceof AdminError) await record(ctx, { ...action, status: error.status });
      throw error;
    }
  };
  return { audited, record };
}
