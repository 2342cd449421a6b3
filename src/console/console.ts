// The console under /console: pages rendered from the same domain services as the admin API, for
// operators (signed in with the admin token) and for IT admins (who opened a setup link). One
// middleware per job, in order, then the operator's and the setup link's routes.
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import type { Middleware } from 'koa';
import compose from 'koa-compose';
import { auditedActions } from '../audit/audited-action.js';
import { AdminError } from '../http/admin-errors.js';
import { basePathOf } from '../http/base-path.js';
import { FailureThrottle } from '../http/failure-throttle.js';
import { Sessions } from '../sessions/sessions.js';
import { assetServer } from './assets.js';
import { NO_BRAND } from './brand.js';
import type { ConsoleDeps, ConsoleState } from './console-deps.js';
import {
  prefixLinks,
  refuseOtherSites,
  requireSession,
  securityHeaders,
  serveAssets,
} from './console-middlewares.js';
import { registerOperatorRoutes } from './operator.routes.js';
import { renderConsoleErrors } from './render-console-errors.js';
import { registerConsoleRoleRoutes } from './roles.routes.js';
import { registerSetupRoutes } from './setup.routes.js';

/** Wrong sign-ins a client address may make within the window before it must wait. */
const SIGN_IN_THROTTLE = { limit: 5, windowMs: 5 * 60_000 } as const;

const CONSOLE_PATH = /^\/console(\/|$)/;

export function consoleApp(deps: ConsoleDeps): Middleware {
  const basePath = basePathOf(deps.publicUrl);
  const sessions = new Sessions(deps.db, deps.adminToken, deps.publicUrl.startsWith('https:'), basePath);
  const signInThrottle = deps.signInThrottle ?? new FailureThrottle(SIGN_IN_THROTTLE);
  const brand = deps.brand ?? NO_BRAND;
  // Case-sensitive, as the path checks above the router are.
  const router = new Router<ConsoleState>({ prefix: '/console', sensitive: true });
  const audited = auditedActions(deps.audit, deps.logger);
  const tools = { ...deps, brand, sessions, signInThrottle, audited };
  registerOperatorRoutes(router, tools);
  // Before the setup routes: /setup/roles is not /setup/:idp.
  registerConsoleRoleRoutes(router, tools);
  registerSetupRoutes(router, tools);
  const chain = compose<Parameters<Middleware<ConsoleState>>[0]>([
    securityHeaders(),
    prefixLinks(basePath),
    serveAssets(assetServer(brand)),
    renderConsoleErrors(tools),
    refuseOtherSites(deps.publicUrl),
    bodyParser({ enableTypes: ['form'], formLimit: '64kb', encoding: 'utf-8' }) as Middleware<ConsoleState>,
    requireSession(sessions, brand),
    router.routes() as Middleware<ConsoleState>,
    notFound,
  ]);
  return (ctx, next) => (CONSOLE_PATH.test(ctx.path) ? chain(ctx as never) : next());
}

const notFound: Middleware = async (ctx) => {
  throw new AdminError(404, 'not_found', `Nothing at ${ctx.path}`);
};
