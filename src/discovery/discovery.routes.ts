import type Router from '@koa/router';
import type { RouterMiddleware } from '@koa/router';
import { respond } from '../http/respond.js';
import { ForbiddenError, NotFoundError } from '../http/scim-errors.js';
import { listResponse } from '../resources/list-response.js';
import { findResourceType, findSchema } from '../schema/registry.js';
import type { ScimState } from '../scim/state.js';
import { renderResourceType, renderSchema, serviceProviderConfig } from './discovery.js';

/**
 * RFC 7644 §4: a filter on /ResourceTypes or /Schemas SHOULD be answered 403, so that a client cannot
 * take the whole list for the matches of its filter.
 */
const refuseFilter: RouterMiddleware<ScimState> = async (ctx, next) => {
  if (ctx.query.filter !== undefined) {
    throw new ForbiddenError(
      `${ctx.path.replace(/\/+$/, '')} takes no filter (RFC 7644 §4): read the whole list`,
    );
  }
  await next();
};

// Discovery answers any valid token of the organization, whatever its scopes, with the organization's
// own schemas beside the standard ones.
export function registerDiscoveryRoutes(router: Router<ScimState>): void {
  router.get('/ServiceProviderConfig', (ctx) => {
    respond(ctx, 200, serviceProviderConfig(ctx.state.baseUrl));
  });

  router.get('/ResourceTypes', refuseFilter, (ctx) => {
    const types = Object.values(ctx.state.registry.types).map((t) =>
      renderResourceType(t, ctx.state.baseUrl),
    );
    respond(ctx, 200, listResponse(types, types.length, 1));
  });

  router.get('/ResourceTypes/:id', (ctx) => {
    const type = findResourceType(ctx.state.registry, ctx.params.id!);
    if (!type) throw new NotFoundError(`Resource type ${ctx.params.id} not found`);
    respond(ctx, 200, renderResourceType(type, ctx.state.baseUrl));
  });

  router.get('/Schemas', refuseFilter, (ctx) => {
    const rendered = ctx.state.registry.schemas.map((s) => renderSchema(s, ctx.state.baseUrl));
    respond(ctx, 200, listResponse(rendered, rendered.length, 1));
  });

  router.get('/Schemas/:id', (ctx) => {
    const schema = findSchema(ctx.state.registry, ctx.params.id!);
    if (!schema) throw new NotFoundError(`Schema ${ctx.params.id} not found`);
    respond(ctx, 200, renderSchema(schema, ctx.state.baseUrl));
  });
}
