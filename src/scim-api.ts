// Everything under {PUBLIC_URL}/scim/v2/{orgId}: one error boundary that renders every failure as a
// SCIM error (RFC 7644 §3.12), then authentication, then, for a route that exists, the content type
// and body, then the router on the path after the organization. A path no route takes is a 404 or a
// 405.
import Router from '@koa/router';
import type { Middleware } from 'koa';
import type { AuditWriter } from './audit/audit.js';
import {
  type AuthenticatedToken,
  authenticateScimRequest,
  recordTokenUse,
  type TokenChecks,
} from './auth/scim-auth.js';
import { isUuid } from './db/ids.js';
import { registerDiscoveryRoutes } from './discovery/discovery.routes.js';
import {
  InvalidSyntaxError,
  MethodNotAllowedError,
  NotFoundError,
  NotImplementedError,
  PayloadTooLargeError,
  ScimError,
  UnsupportedMediaTypeError,
} from './http/scim-errors.js';
import { SCIM_CONTENT_TYPE, type ScimDeps, type ScimState } from './http/scim-state.js';
import { BODY_LIMIT, BODY_METHODS, checkRoute, jsonBodyReader, type RouteCheck } from './http/surface.js';
import type { Logger } from './log.js';
import { registerGroupRoutes } from './resources/groups.routes.js';
import { registerRootSearch } from './resources/search.routes.js';
import { registerUserRoutes } from './resources/users.routes.js';

const SCIM_PATH = /^\/scim\/v2\/([^/]+)(\/.*)?$/i;
const JSON_TYPES = ['application/scim+json', 'application/json'];

export interface ScimApiDeps extends ScimDeps {
  readonly logger: Logger;
  readonly tokenChecks: TokenChecks;
  readonly audit: AuditWriter;
}

function buildRouter(deps: ScimDeps): Router<ScimState> {
  // Routes match case-insensitively and with or without a trailing slash (`/users`, `/Users/`):
  // the Microsoft collection sends both. They match the path after the organization (`/Users`), which
  // scimApi hands the router (newRouterPath): with the prefix in every route, each request matched
  // and decoded `/scim/v2/:orgId` once per route tried, though scimApi has already read it.
  const router = new Router<ScimState>({ sensitive: false, strict: false });
  registerDiscoveryRoutes(router);
  registerUserRoutes(router, deps);
  registerGroupRoutes(router, deps);
  registerRootSearch(router, deps);
  const notImplemented = (what: string) => () => {
    throw new NotImplementedError(`${what} is not supported by this service provider`);
  };
  router.all('/Bulk', notImplemented('Bulk'));
  router.all('/Me', notImplemented('/Me'));
  return router;
}

export function scimApi(deps: ScimApiDeps): Middleware {
  const router = buildRouter(deps);
  const routes = router.routes();
  const readBody = jsonBodyReader();
  /** Why no route takes this method at this path: 405 when another method would, else 404. */
  const noRoute = (route: RouteCheck, ctx: Parameters<Middleware>[0]) =>
    route.kind === 'methodNotAllowed'
      ? new MethodNotAllowedError(ctx.method, route.allowed)
      : new NotFoundError(`No SCIM endpoint at ${ctx.path}`);

  return async (ctx, next) => {
    const match = SCIM_PATH.exec(ctx.path);
    if (!match) return next();
    let token: AuthenticatedToken | undefined;
    try {
      // A path that does not decode names no organization: the token cannot belong to it.
      const orgId = safeDecode(match[1]!) ?? '';
      token = await authenticateScimRequest(
        deps.db,
        orgId,
        ctx.get('authorization'),
        new Date(),
        deps.tokenChecks,
      );
      const state = ctx.state as ScimState;
      const write = auditedWrite(ctx.method, match[2] ?? '');
      const actor = `token:${token.tokenId}`;
      const auditOrg = token.org.id;
      state.audit = write && {
        committed: false,
        entry: (status, resourceId) => ({
          orgId: auditOrg,
          actor,
          ...write,
          resourceId: resourceId ?? write.resourceId,
          status,
          requestId: state.requestId,
        }),
      };
      state.org = token.org;
      state.tokenId = token.tokenId;
      state.scopes = token.scopes;
      state.baseUrl = `${deps.publicUrl}/scim/v2/${encodeURIComponent(orgId)}`;

      const path = match[2] || '/';
      if (BODY_METHODS.has(ctx.method)) {
        // Only for a route that exists, so that an unknown path is a 404 whatever its body.
        const route = checkRoute(router, path, ctx.method);
        if (route.kind !== 'matched') throw noRoute(route, ctx);
        const type = ctx.get('content-type');
        if (type && !ctx.is(JSON_TYPES)) throw new UnsupportedMediaTypeError(type.split(';')[0]!.trim());
        const failure = await readBody(ctx);
        if (failure === 'tooLarge') throw new PayloadTooLargeError(BODY_LIMIT);
        if (failure === 'invalidJson') throw new InvalidSyntaxError('The request body is not valid JSON');
      }
      let routed = true;
      const routing = ctx as Parameters<typeof routes>[0];
      routing.newRouterPath = path;
      await routes(routing, async () => {
        routed = false;
      });
      // The router found no route (it calls next): say why, matching the path once more.
      if (!routed) throw noRoute(checkRoute(router, path, ctx.method), ctx);
    } catch (error) {
      renderError(ctx, error, deps.logger);
    }
    if (!token) return;
    // After the answer is settled, outside the request's transaction: a write that did not commit is
    // recorded here (one that did was recorded with its change: scim-state.ts, auditedTransaction).
    // Nothing here may change the answer.
    try {
      const succeeded = ctx.status < 400;
      const pending = (ctx.state as ScimState).audit;
      if (pending && !pending.committed && succeeded) {
        deps.logger.error(
          { requestId: ctx.state.requestId },
          'a SCIM write succeeded without its audit entry',
        );
      }
      const tokenUse = recordTokenUse(deps.db, token, succeeded, new Date());
      const audit =
        pending && !pending.committed
          ? deps.audit.record(pending.entry(ctx.status, succeeded ? createdId(ctx.body) : undefined))
          : undefined;
      // A read that records nothing (nearly every one) finishes here without waiting on anything.
      if (tokenUse || audit) await Promise.all([tokenUse, audit]);
    } catch (err) {
      deps.logger.warn({ err, requestId: ctx.state.requestId }, 'could not record token use or audit');
    }
  };
}

function safeDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

const WRITE_ACTIONS: Readonly<Record<string, string>> = {
  POST: 'create',
  PUT: 'replace',
  PATCH: 'patch',
  DELETE: 'delete',
};
const RESOURCE_PATH = /^\/(Users|Groups)(?:\/([^/]+))?\/?$/i;

/**
 * The audit action of a SCIM request, when it writes a user or a group (searches do not), with the
 * resource the path names.
 */
function auditedWrite(method: string, rest: string) {
  const verb = WRITE_ACTIONS[method];
  if (!verb) return undefined;
  const match = RESOURCE_PATH.exec(rest);
  if (!match || match[2]?.toLowerCase() === '.search') return undefined;
  const type = match[1]!.toLowerCase() === 'users' ? 'User' : 'Group';
  const named = match[2] ? (safeDecode(match[2]) ?? match[2]) : undefined;
  // An id in the path matches whatever its case; the log keeps the id as stored (lower case).
  const resourceId = named !== undefined && isUuid(named) ? named.toLowerCase() : named;
  return { action: `${type.toLowerCase()}.${verb}`, resourceType: type, resourceId };
}

/** The id of the resource a successful create answered with. */
function createdId(body: unknown): string | undefined {
  const id = typeof body === 'object' && body !== null ? (body as { id?: unknown }).id : undefined;
  return typeof id === 'string' ? id : undefined;
}

function renderError(ctx: Parameters<Middleware>[0], error: unknown, logger: Logger): void {
  let scimError: ScimError;
  if (error instanceof ScimError) {
    scimError = error;
  } else {
    logger.error({ err: error, requestId: ctx.state.requestId }, 'unhandled error in SCIM request');
    scimError = new ScimError(500, 'The service provider failed to process the request');
  }
  ctx.status = scimError.status;
  for (const [name, value] of Object.entries(scimError.headers)) ctx.set(name, value);
  ctx.body = scimError.toJSON();
  ctx.type = SCIM_CONTENT_TYPE;
}
