import type Router from '@koa/router';
import { NotFoundError } from '../http/scim-errors.js';
import { respond, type ScimState } from '../http/scim-state.js';
import { listResponse } from '../resources/list-response.js';
import { findSchema } from '../schema/registry.js';
import {
  allResourceTypes,
  allSchemas,
  findResourceType,
  renderResourceType,
  renderSchema,
  serviceProviderConfig,
} from './discovery.js';

// Discovery answers any valid token of the organization, whatever its scopes.
export function registerDiscoveryRoutes(router: Router<ScimState>): void {
  router.get('/ServiceProviderConfig', (ctx) => {
    respond(ctx, 200, serviceProviderConfig(ctx.state.baseUrl));
  });

  router.get('/ResourceTypes', (ctx) => {
    const types = allResourceTypes().map((t) => renderResourceType(t, ctx.state.baseUrl));
    respond(ctx, 200, listResponse(types, types.length, 1));
  });

  router.get('/ResourceTypes/:id', (ctx) => {
    const type = findResourceType(ctx.params.id!);
    if (!type) throw new NotFoundError(`Resource type ${ctx.params.id} not found`);
    respond(ctx, 200, renderResourceType(type, ctx.state.baseUrl));
  });

  router.get('/Schemas', (ctx) => {
    const rendered = allSchemas().map((s) => renderSchema(s, ctx.state.baseUrl));
    respond(ctx, 200, listResponse(rendered, rendered.length, 1));
  });

  router.get('/Schemas/:id', (ctx) => {
    const schema = findSchema(ctx.params.id!);
    if (!schema) throw new NotFoundError(`Schema ${ctx.params.id} not found`);
    respond(ctx, 200, renderSchema(schema, ctx.state.baseUrl));
  });
}
