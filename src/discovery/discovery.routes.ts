import type Router from '@koa/router';
import type { RouterMiddleware } from '@koa/router';
import { respond } from '../http/respond.js';
import { ForbiddenError, NotFoundError } from '../http/scim-errors.js';
import type { ScimState } from '../resources/scim-state.js';
import { findResourceType, findSchema } from '../schema/registry.js';
import { renderResourceType, renderSchema, serviceProviderConfig } from './discovery.js';
import type { DiscoveryDocuments } from './discovery-documents.js';

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
// own schemas beside the standard ones, from documents built once per version of its schemas.
export function registerDiscoveryRoutes(router: Router<ScimState>, documents: DiscoveryDocuments): void {
  const of = (state: ScimState) => documents.of(state.baseUrl, state.registry);

  router.get('/ServiceProviderConfig', (ctx) => {
    respond(ctx, 200, serviceProviderConfig(ctx.state.baseUrl));
  });

  router.get('/ResourceTypes', refuseFilter, (ctx) => {
    respond(ctx, 200, of(ctx.state).resourceTypes);
  });

  router.get('/ResourceTypes/:id', (ctx) => {
    const type = findResourceType(ctx.state.registry, ctx.params.id!);
    if (!type) throw new NotFoundError(`Resource type ${ctx.params.id} not found`);
    respond(
      ctx,
      200,
      of(ctx.state).single(`type:${type.id}`, (baseUrl) => renderResourceType(type, baseUrl)),
    );
  });

  router.get('/Schemas', refuseFilter, (ctx) => {
    respond(ctx, 200, of(ctx.state).schemas);
  });

  router.get('/Schemas/:id', (ctx) => {
    const schema = findSchema(ctx.state.registry, ctx.params.id!);
    if (!schema) throw new NotFoundError(`Schema ${ctx.params.id} not found`);
    respond(
      ctx,
      200,
      of(ctx.state).single(`schema:${schema.id}`, (baseUrl) => renderSchema(schema, baseUrl)),
    );
  });
}
