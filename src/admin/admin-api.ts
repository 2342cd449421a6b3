// The admin API under /admin/v1: JSON, the admin bearer token, `{error:{code,message}}`.
import Router from '@koa/router';
import type { Middleware } from 'koa';
import type { Kysely } from 'kysely';
import { type AuditEntry, type AuditWriter, resourceTypeOf } from '../audit/audit.js';
import type { ChangeFeed } from '../changes/change-feed.js';
import * as feed from '../changes/feed.service.js';
import * as schemas from '../custom-schemas/schemas.service.js';
import { databaseFailure, failureFields, isUnstorableTextError } from '../db/failures.js';
import type { DB } from '../db/tables.js';
import { UNSTORABLE_TEXT_MESSAGE } from '../db/text.js';
import type { SyncActivity } from '../health/sync-activity.js';
import { orgHealth } from '../health/sync-health.service.js';
import { AdminError } from '../http/admin-errors.js';
import { bearerToken, secretMatcher } from '../http/bearer.js';
import { BODY_LIMIT, BODY_METHODS, jsonBodyReader } from '../http/request-body.js';
import { checkRoute } from '../http/route-check.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics/metrics.js';
import { changeOrgAuth } from '../orgs/auth-changes.js';
import * as admin from '../orgs/orgs.service.js';
import type { TokenChecks } from '../orgs/scim-auth.js';
import * as setupLinks from '../orgs/setup-links.service.js';
import { registerWebhookRoutes } from '../webhooks/webhooks.routes.js';
import type { WebhookDeps } from '../webhooks/webhooks.service.js';

export interface AdminApiDeps {
  readonly db: Kysely<DB>;
  readonly publicUrl: string;
  readonly adminToken: string;
  readonly logger: Logger;
  readonly tokenChecks: TokenChecks;
  readonly audit: AuditWriter;
  readonly changes: ChangeFeed;
  readonly webhooks: Omit<WebhookDeps, 'db'>;
  readonly activity: Pick<SyncActivity, 'flush'>;
  readonly metrics: Pick<Metrics, 'databaseFailure'>;
  /** No request for this long: an organization's sync is idle. */
  readonly idleAfterMs: number;
}

/** What an API key may do: read the change feed. */
const FEED_PATH = /^\/admin\/v1\/changes\/?$/;

function buildRouter(deps: AdminApiDeps): Router {
  const { db, publicUrl } = deps;
  const router = new Router({ prefix: '/admin/v1' });

  const changeAuth = <T>(orgId: string, change: (trx: Kysely<DB>) => Promise<T>) =>
    changeOrgAuth(db, deps.tokenChecks, orgId, change);

  router.post('/orgs', async (ctx) => {
    const org = await db.transaction().execute((trx) => admin.createOrg(trx, ctx.request.body));
    ctx.status = 201;
    ctx.body = admin.renderOrg(org, publicUrl);
  });
  router.get('/orgs', async (ctx) => {
    ctx.body = { orgs: (await admin.listOrgs(db)).map((o) => admin.renderOrg(o, publicUrl)) };
  });
  router.get('/orgs/:orgId', async (ctx) => {
    ctx.body = admin.renderOrg(await admin.getOrg(db, ctx.params.orgId!), publicUrl);
  });
  router.patch('/orgs/:orgId', async (ctx) => {
    const orgId = ctx.params.orgId!;
    const org = await changeAuth(orgId, (trx) => admin.updateOrg(trx, orgId, ctx.request.body));
    ctx.body = admin.renderOrg(org, publicUrl);
  });
  router.post('/orgs/:orgId/tokens', async (ctx) => {
    const { token, secret } = await db
      .transaction()
      .execute((trx) => admin.createToken(trx, ctx.params.orgId!, ctx.request.body));
    ctx.status = 201;
    ctx.body = { ...admin.renderToken(token), token: secret };
  });
  router.delete('/orgs/:orgId', async (ctx) => {
    const orgId = ctx.params.orgId!;
    await changeAuth(orgId, (trx) => admin.deleteOrg(trx, orgId));
    deps.changes.written();
    ctx.status = 204;
  });
  router.post('/orgs/:orgId/tokens/:tokenId/rotate', async (ctx) => {
    const { orgId, tokenId } = ctx.params as { orgId: string; tokenId: string };
    const { token, secret } = await changeAuth(orgId, (trx) =>
      admin.rotateToken(trx, orgId, tokenId, ctx.request.body),
    );
    ctx.status = 201;
    ctx.body = { ...admin.renderToken(token), token: secret };
  });
  router.post('/orgs/:orgId/tokens/:tokenId/revoke', async (ctx) => {
    const { orgId, tokenId } = ctx.params as { orgId: string; tokenId: string };
    const token = await changeAuth(orgId, (trx) => admin.revokeToken(trx, orgId, tokenId, ctx.request.body));
    ctx.body = admin.renderToken(token);
  });
  router.get('/orgs/:orgId/events', async (ctx) => {
    ctx.body = await admin.listEvents(db, ctx.params.orgId!, ctx.query);
  });
  router.get('/orgs/:orgId/health', async (ctx) => {
    // This process's activity is written first, so what it has just served shows at once.
    await deps.activity.flush();
    const failures = ctx.query.failures === undefined ? undefined : Number(ctx.query.failures);
    if (failures !== undefined && !(Number.isInteger(failures) && failures >= 0 && failures <= 100))
      throw new AdminError(400, 'invalid_request', 'failures must be a whole number from 0 to 100');
    ctx.body = await orgHealth(db, ctx.params.orgId!, new Date(), {
      idleAfterMs: deps.idleAfterMs,
      failures,
    });
  });
  router.post('/orgs/:orgId/setup-links', async (ctx) => {
    ctx.status = 201;
    ctx.body = await setupLinks.createSetupLink(db, ctx.params.orgId!, ctx.request.body, {
      publicUrl,
      createdBy: 'admin',
    });
  });
  router.get('/orgs/:orgId/setup-links', async (ctx) => {
    ctx.body = await setupLinks.listSetupLinks(db, ctx.params.orgId!);
  });
  router.post('/orgs/:orgId/setup-links/:linkId/revoke', async (ctx) => {
    ctx.body = await setupLinks.revokeSetupLink(db, ctx.params.orgId!, ctx.params.linkId!);
  });
  router.get('/orgs/:orgId/tokens', async (ctx) => {
    ctx.body = { tokens: (await admin.listTokens(db, ctx.params.orgId!)).map(admin.renderToken) };
  });
  router.get('/orgs/:orgId/schemas', async (ctx) => {
    ctx.body = { schemas: await schemas.listSchemas(db, ctx.params.orgId!) };
  });
  router.get('/orgs/:orgId/schemas/:urn', async (ctx) => {
    ctx.body = await schemas.getSchema(db, ctx.params.orgId!, ctx.params.urn!);
  });
  router.put('/orgs/:orgId/schemas/:urn', async (ctx) => {
    const { orgId, urn } = ctx.params as { orgId: string; urn: string };
    const { schema, created } = await changeAuth(orgId, (trx) =>
      schemas.putSchema(trx, orgId, urn, ctx.request.body),
    );
    ctx.status = created ? 201 : 200;
    ctx.body = schema;
  });
  router.delete('/orgs/:orgId/schemas/:urn', async (ctx) => {
    const { orgId, urn } = ctx.params as { orgId: string; urn: string };
    await changeAuth(orgId, (trx) => schemas.deleteSchema(trx, orgId, urn));
    ctx.status = 204;
  });
  registerWebhookRoutes(router, { db, ...deps.webhooks });
  router.get('/changes', async (ctx) => {
    // A long poll ends when its client goes away.
    const gone = new AbortController();
    ctx.res.once('close', () => gone.abort());
    ctx.body = await feed.readChanges(db, deps.changes, ctx.query, {
      signal: gone.signal,
      apiKey: ctx.state.apiKey,
    });
    ctx.type = 'application/json';
  });
  router.post('/api-keys', async (ctx) => {
    ctx.status = 201;
    ctx.body = await feed.createApiKey(db, ctx.request.body);
  });
  router.get('/api-keys', async (ctx) => {
    ctx.body = await feed.listApiKeys(db);
  });
  router.post('/api-keys/:keyId/revoke', async (ctx) => {
    ctx.body = await feed.revokeApiKey(db, deps.changes, ctx.params.keyId!);
  });
  return router;
}

export function adminApi(deps: AdminApiDeps): Middleware {
  const router = buildRouter(deps);
  const routes = router.routes();
  const isAdminToken = secretMatcher(deps.adminToken);
  const readBody = jsonBodyReader();

  return async (ctx, next) => {
    if (ctx.path !== '/admin/v1' && !ctx.path.startsWith('/admin/v1/')) return next();
    try {
      const presented = bearerToken(ctx.get('authorization'));
      const isAdmin = isAdminToken(presented);
      const apiKey = !isAdmin && presented ? await feed.checkApiKey(deps.db, presented) : undefined;
      if (!isAdmin && !apiKey) {
        throw new AdminError(401, 'unauthorized', 'The admin token or API key is missing or wrong', {
          'WWW-Authenticate': 'Bearer realm="scimd-admin"',
        });
      }
      if (apiKey) {
        if (!(ctx.method === 'GET' && FEED_PATH.test(ctx.path)))
          throw new AdminError(
            403,
            'forbidden',
            'An API key may only read the change feed (GET /admin/v1/changes)',
          );
        ctx.state.apiKey = apiKey;
        feed
          .touchApiKey(deps.db, apiKey)
          .catch((err) =>
            deps.logger.warn(
              { err, requestId: ctx.state.requestId },
              'could not record the use of an API key',
            ),
          );
      }
      const route = checkRoute(router, ctx.path, ctx.method);
      if (route.kind === 'notFound')
        throw new AdminError(404, 'not_found', `No admin endpoint at ${ctx.path}`);
      if (route.kind === 'methodNotAllowed') {
        const allowed = route.allowed.join(', ');
        ctx.set('Allow', allowed);
        throw new AdminError(
          405,
          'method_not_allowed',
          `${ctx.method} is not allowed here; allowed: ${allowed}`,
        );
      }
      if (BODY_METHODS.has(ctx.method)) {
        // A request without a body (is() answers null) is an empty object, whatever its Content-Type.
        if (ctx.get('content-type') && ctx.is('application/json') === false) {
          throw new AdminError(415, 'unsupported_media_type', 'Send application/json');
        }
        const failure = await readBody(ctx);
        if (failure === 'tooLarge') throw new AdminError(413, 'payload_too_large', `Body over ${BODY_LIMIT}`);
        if (failure === 'invalidJson')
          throw new AdminError(400, 'invalid_request', 'The body is not valid JSON');
        if (failure === 'unsupportedEncoding')
          throw new AdminError(415, 'unsupported_media_type', 'Send the body as identity, gzip or deflate');
        if (failure === 'undecodable')
          throw new AdminError(
            400,
            'invalid_request',
            'The body could not be decoded as its Content-Encoding says',
          );
      }
      await routes(ctx as Parameters<typeof routes>[0], async () => {});
    } catch (error) {
      const adminError = adminErrorOf(error, deps, ctx.state.requestId);
      ctx.status = adminError.status;
      for (const [name, value] of Object.entries(adminError.headers)) ctx.set(name, value);
      ctx.body = adminError.toJSON(ctx.state.requestId);
    }
    // After the answer is settled, which nothing here may change: a change that committed stays a
    // success (and a new token's secret reaches the caller) even when its audit entry cannot be
    // written. Requests without the admin token are not recorded.
    if (ctx.status === 401) return;
    const entry = auditEntry(deps, ctx);
    if (!entry) return;
    try {
      await deps.audit.record(entry);
    } catch (err) {
      // The database is what failed, most likely: the entry goes to the process log instead.
      deps.logger.error(
        { err, audit: entry, requestId: ctx.state.requestId },
        'could not record an admin action in the audit log',
      );
    }
  };
}

function adminErrorOf(
  error: unknown,
  { logger, metrics }: Pick<AdminApiDeps, 'logger' | 'metrics'>,
  requestId: string,
): AdminError {
  if (error instanceof AdminError) return error;
  if (isUnstorableTextError(error))
    return new AdminError(400, 'invalid_request', `A value ${UNSTORABLE_TEXT_MESSAGE}`);
  const failure = databaseFailure(error);
  if (failure) {
    metrics.databaseFailure(failure.kind);
    logger.warn({ ...failureFields(error, failure), requestId }, 'database failure in admin request');
    return new AdminError(503, 'unavailable', failure.detail, {
      'Retry-After': String(failure.retryAfterSeconds),
    });
  }
  logger.error({ err: error, requestId }, 'unhandled error in admin request');
  return new AdminError(500, 'internal', 'The request failed unexpectedly');
}

const ADMIN_ACTIONS: readonly [string, RegExp, string][] = [
  ['POST', /^\/admin\/v1\/orgs\/?$/, 'org.create'],
  ['PATCH', /^\/admin\/v1\/orgs\/([^/]+)\/?$/, 'org.update'],
  ['DELETE', /^\/admin\/v1\/orgs\/([^/]+)\/?$/, 'org.delete'],
  ['POST', /^\/admin\/v1\/orgs\/([^/]+)\/tokens\/?$/, 'token.create'],
  ['POST', /^\/admin\/v1\/orgs\/([^/]+)\/tokens\/([^/]+)\/rotate\/?$/, 'token.rotate'],
  ['POST', /^\/admin\/v1\/orgs\/([^/]+)\/tokens\/([^/]+)\/revoke\/?$/, 'token.revoke'],
  ['POST', /^\/admin\/v1\/orgs\/([^/]+)\/setup-links\/?$/, 'setup_link.create'],
  ['POST', /^\/admin\/v1\/orgs\/([^/]+)\/setup-links\/([^/]+)\/revoke\/?$/, 'setup_link.revoke'],
  ['POST', /^\/admin\/v1\/api-keys\/?$/, 'api_key.create'],
  ['POST', /^\/admin\/v1\/api-keys\/([^/]+)\/revoke\/?$/, 'api_key.revoke'],
  ['POST', /^\/admin\/v1\/webhooks\/?$/, 'webhook.create'],
  ['PATCH', /^\/admin\/v1\/webhooks\/([^/]+)\/?$/, 'webhook.update'],
  ['DELETE', /^\/admin\/v1\/webhooks\/([^/]+)\/?$/, 'webhook.delete'],
  ['POST', /^\/admin\/v1\/webhooks\/([^/]+)\/rotate-secret\/?$/, 'webhook.rotate_secret'],
  ['POST', /^\/admin\/v1\/webhooks\/([^/]+)\/deliveries\/[^/]+\/redeliver\/?$/, 'webhook.redeliver'],
];

/**
 * The audit entry of an admin action, success or failure. A deleted organization takes its log with
 * it, so its deletion goes to the process log instead.
 */
function auditEntry(deps: AdminApiDeps, ctx: Parameters<Middleware>[0]): AuditEntry | undefined {
  const found = ADMIN_ACTIONS.find(([method, path]) => method === ctx.method && path.test(ctx.path));
  if (!found) return undefined;
  const [, path, action] = found;
  const [, orgPart, resourcePart] = path.exec(ctx.path)!;
  const body = ctx.body as { id?: string } | undefined;
  const orgId = orgPart ?? (action === 'org.create' ? body?.id : undefined);
  const created = action === 'token.create' || action === 'setup_link.create';
  const resourceId = resourcePart ?? (created ? body?.id : orgId);
  if (action === 'org.delete' && ctx.status < 400) {
    deps.logger.info({ action, orgId, requestId: ctx.state.requestId }, 'organization deleted with its data');
    return undefined;
  }
  // API keys and webhook endpoints belong to no organization's log: their changes go to the process
  // log (never a secret).
  if (action.startsWith('api_key.') || action.startsWith('webhook.')) {
    const id = orgPart ?? body?.id;
    deps.logger.info({ action, id, status: ctx.status, requestId: ctx.state.requestId }, 'admin action');
    return undefined;
  }
  if (!orgId) return undefined;
  return {
    orgId,
    actor: 'admin',
    action,
    resourceType: resourceTypeOf(action),
    resourceId,
    status: ctx.status,
    requestId: ctx.state.requestId,
  };
}
