// createApp: the ordered middleware list. Each surface (health, admin, console, SCIM) owns its path prefix and
// renders its own errors; everything else is a plain 404.
import Koa from 'koa';
import { adminApi } from './admin/admin-api.js';
import { AuditLog } from './audit/audit-log.js';
import { ChangeFeed } from './changes/change-feed.js';
import type { Brand } from './console/brand.js';
import { consoleApp } from './console/console.js';
import type { Database } from './db/database.js';
import { SyncActivity } from './health/sync-activity.js';
import { basePathOf, prefixLocations } from './http/base-path.js';
import type { FailureThrottle } from './http/failure-throttle.js';
import { requestContext } from './http/request-context.js';
import type { Logger } from './log.js';
import { Metrics } from './metrics/metrics.js';
import { measureRequests, metricsEndpoint } from './metrics/metrics-http.js';
import type { TokenChecks } from './orgs/scim-auth.js';
import { TokenCache } from './orgs/token-cache.js';
import { PagePositions } from './resources/page-positions.js';
import { ResourceWrites } from './resources/resource-writes.js';
import { scimApi } from './scim/scim-api.js';
import { SecretBox } from './webhooks/secret-box.js';
import type { WebhookDeps } from './webhooks/webhooks.service.js';

export interface AppDeps {
  /** The database: the system share (`db`), each organization's share (`forOrg`) and `ping`. */
  readonly database: Pick<Database, 'db' | 'forOrg' | 'ping' | 'share'>;
  readonly publicUrl: string;
  readonly adminToken: string;
  readonly logger: Logger;
  /** Remembered token checks, shared by the SCIM API (reads) and the admin API (forgets). */
  readonly tokenChecks?: TokenChecks;
  /** The time SCIM tokens' expiry is checked against; the wall clock unless given (tests move their own). */
  readonly now?: () => Date;
  /** The change feed; one that neither listens nor purges unless given (index.ts starts one). */
  readonly changes?: ChangeFeed;
  /** How webhook secrets are sealed, whether private targets are allowed, and who sends pings. */
  readonly webhooks?: Omit<WebhookDeps, 'db'>;
  /** Sync activity; one that writes only when health is read unless given (index.ts starts one). */
  readonly activity?: SyncActivity;
  /** Metrics; without process metrics unless given (index.ts gives them). */
  readonly metrics?: Metrics;
  /** No request for this long: an organization's sync is idle. */
  readonly idleAfterMs?: number;
  /** The audit entries written apart from a change; the app's own unless given (tests inject faults). */
  readonly audit?: AuditLog;
  /** The console's wrong sign-ins by client address; its own unless given (tests give their clock). */
  readonly signInThrottle?: FailureThrottle;
  /** The operator's white label on the console (CONSOLE_BRAND_*); none unless given. */
  readonly brand?: Brand;
}

/** SYNC_IDLE_HOURS' default. */
const DEFAULT_IDLE_AFTER_MS = 24 * 60 * 60_000;

export function createApp(appDeps: AppDeps): Koa {
  const { database } = appDeps;
  const deps = {
    ...appDeps,
    db: database.db,
    tokenChecks: appDeps.tokenChecks ?? new TokenCache(),
    changes: appDeps.changes ?? new ChangeFeed(database.db, { logger: appDeps.logger }),
    webhooks: appDeps.webhooks ?? { box: new SecretBox(appDeps.adminToken), allowPrivate: false },
    audit: appDeps.audit ?? new AuditLog(database.db, appDeps.logger),
    writes: new ResourceWrites(),
    pages: new PagePositions(),
    activity: appDeps.activity ?? new SyncActivity(database.db, { logger: appDeps.logger }),
    metrics: appDeps.metrics ?? new Metrics({ db: database.db, share: database.share }),
    idleAfterMs: appDeps.idleAfterMs ?? DEFAULT_IDLE_AFTER_MS,
  };
  deps.changes.onAdvance((position) => deps.metrics.feedAdvanced(position));
  const app = new Koa();
  app.silent = true;
  app.on('error', (err) => deps.logger.error({ err }, 'unhandled koa error'));

  const basePath = basePathOf(deps.publicUrl);
  if (basePath !== '') app.use(prefixLocations(basePath));
  app.use(requestContext(deps.logger));
  app.use(measureRequests(deps.metrics));
  app.use(async (ctx, next) => {
    if (ctx.path === '/healthz') {
      ctx.body = { status: 'ok' };
      return;
    }
    if (ctx.path === '/readyz') {
      const ready = await database.ping();
      ctx.status = ready ? 200 : 503;
      if (!ready) ctx.set('Retry-After', '5');
      ctx.body = { status: ready ? 'ready' : 'database unavailable' };
      return;
    }
    await next();
  });
  app.use(metricsEndpoint(deps.metrics, deps.adminToken));
  app.use(adminApi(deps));
  app.use(consoleApp(deps));
  app.use(scimApi(deps));
  app.use((ctx) => {
    ctx.status = 404;
    ctx.body = {
      error: { code: 'not_found', message: `Nothing at ${ctx.path}`, requestId: ctx.state.requestId },
    };
  });
  return app;
}
