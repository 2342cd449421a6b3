import type Router from '@koa/router';
import type { RouterMiddleware } from '@koa/router';
import { respond } from '../http/respond.js';
import { ForbiddenError, NotFoundError } from '../http/scim-errors.js';
import type { ScimState } from '../resources/scim-state.js';
import { type CatalogueKinds, catalogueKinds } from '../roles/catalogue-kinds.repository.js';
import { findResourceType, findSchema } from '../schema/registry.js';
import { renderResourceType, renderSchema, serviceProviderConfig } from './discovery.js';
import { catalogueTypesOf, type DiscoveryDocuments } from './discovery-documents.js';

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
// own schemas beside the standard ones, and Role and Entitlement while its catalogue of each has
// entries (read at each request, so a catalogue's change shows at once), from documents built once
// per version of its schemas and per catalogues it has.
export function registerDiscoveryRoutes(router: Router<ScimState>, documents: DiscoveryDocuments): void {
  const kindsOf = (state: ScimState) => catalogueKinds(state.db, state.org.id);
  const of = (state: ScimState, kinds: CatalogueKinds) => documents.of(state.baseUrl, state.registry, kinds);

  router.get('/ServiceProviderConfig', (ctx) => {
    respond(ctx, 200, serviceProviderConfig(ctx.state.baseUrl));
  });

  router.get('/ResourceTypes', refuseFilter, async (ctx) => {
    respond(ctx, 200, of(ctx.state, await kindsOf(ctx.state)).resourceTypes);
  });

  router.get('/ResourceTypes/:id', async (ctx) => {
    const id = ctx.params.id!;
    const kinds = await kindsOf(ctx.state);
    const type =
      findResourceType(ctx.state.registry, id) ??
      catalogueTypesOf(kinds).find((t) => t.id.toLowerCase() === id.toLowerCase());
    if (!type) throw new NotFoundError(`Resource type ${id} not found`);
    respond(
      ctx,
      200,
      of(ctx.state, kinds).single(`type:${type.id}`, (baseUrl) => renderResourceType(type, baseUrl)),
    );
  });

  router.get('/Schemas', refuseFilter, async (ctx) => {
    respond(ctx, 200, of(ctx.state, await kindsOf(ctx.state)).schemas);
  });

  router.get('/Schemas/:id', async (ctx) => {
    const id = ctx.params.id!;
    const kinds = await kindsOf(ctx.state);
    const schema =
      findSchema(ctx.state.registry, id) ??
      catalogueTypesOf(kinds).find((t) => t.schema.toLowerCase() === id.toLowerCase())?.definition;
    if (!schema) throw new NotFoundError(`Schema ${id} not found`);
    respond(
      ctx,
      200,
      of(ctx.state, kinds).single(`schema:${schema.id}`, (baseUrl) => renderSchema(schema, baseUrl)),
    );
  });
}
