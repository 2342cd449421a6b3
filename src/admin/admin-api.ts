// The admin API under /admin/v1 (JSON; the admin bearer token, or an API key for the change feed;
// errors as `{error:{code,message,requestId}}`): one middleware per job, in order, then the routes
// each domain declares with their audit entries.
import Router from '@koa/router';
import type { Middleware } from 'koa';
import compose from 'koa-compose';
import type { Kysely } from 'kysely';
import { registerAuditRoutes } from '../audit/audit.routes.js';
import type { AuditLog } from '../audit/audit-log.js';
import { auditedActions } from '../audit/audited-action.js';
import type { ChangeFeed } from '../changes/change-feed.js';
import { registerFeedRoutes } from '../changes/feed.routes.js';
import { registerSchemaRoutes } from '../custom-schemas/schemas.routes.js';
import type { DB } from '../db/tables.js';
import { registerHealthRoutes } from '../health/health.routes.js';
import type { SyncActivity } from '../health/sync-activity.js';
import { AdminError } from '../http/admin-errors.js';
import { readJsonBody } from '../http/json-body.js';
import { knownRoute } from '../http/known-route.js';
import { renderJsonErrors } from '../http/render-json-errors.js';
import type { RouteState as AdminState } from '../http/route-state.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics/metrics.js';
import { registerOrgRoutes } from '../orgs/orgs.routes.js';
import type { TokenChecks } from '../orgs/scim-auth.js';
import { registerSetupLinkRoutes } from '../orgs/setup-links.routes.js';
import { registerRoleRoutes } from '../roles/roles.routes.js';
import { registerWebhookRoutes } from '../webhooks/webhooks.routes.js';
import type { WebhookDeps } from '../webhooks/webhooks.service.js';
import { authenticateAdmin } from './authenticate-admin.js';

export interface AdminApiDeps {
  readonly db: Kysely<DB>;
  readonly publicUrl: string;
  readonly adminToken: string;
  readonly logger: Logger;
  readonly tokenChecks: TokenChecks;
  readonly audit: AuditLog;
  readonly changes: ChangeFeed;
  readonly webhooks: Omit<WebhookDeps, 'db'>;
  readonly activity: Pick<SyncActivity, 'flush'>;
  readonly metrics: Pick<Metrics, 'databaseFailure'>;
  /** No request for this long: an organization's sync is idle. */
  readonly idleAfterMs: number;
}

const ADMIN_PATH = /^\/admin\/v1(\/|$)/;

function buildRouter(deps: AdminApiDeps): Router<AdminState> {
  const { db } = deps;
  const router = new Router<AdminState>({ prefix: '/admin/v1' });
  const audited = auditedActions(deps.audit, deps.logger);
  registerOrgRoutes(router, { ...deps, audited });
  registerSetupLinkRoutes(router, { ...deps, audited });
  registerAuditRoutes(router, db);
  registerHealthRoutes(router, deps);
  registerSchemaRoutes(router, { ...deps, audited });
  registerRoleRoutes(router, { db, audited });
  registerWebhookRoutes(router, { db, ...deps.webhooks, audited });
  registerFeedRoutes(router, { ...deps, audited });
  return router;
}

export function adminApi(deps: AdminApiDeps): Middleware {
  const router = buildRouter(deps);
  const chain = compose<Parameters<Middleware<AdminState>>[0]>([
    renderJsonErrors(deps.logger, deps.metrics),
    authenticateAdmin(deps.db, deps.adminToken, deps.logger),
    knownRoute(router, {
      notFound: (path) => new AdminError(404, 'not_found', `No admin endpoint at ${path}`),
      methodNotAllowed: (method, allowed) =>
        new AdminError(
          405,
          'method_not_allowed',
          `${method} is not allowed here; allowed: ${allowed.join(', ')}`,
        ),
    }),
    readJsonBody(),
    router.routes() as Middleware<AdminState>,
  ]);
  return (ctx, next) => (ADMIN_PATH.test(ctx.path) ? chain(ctx as never) : next());
}
