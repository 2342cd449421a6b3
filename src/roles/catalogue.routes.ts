// SCIM /Roles and /Entitlements of an organization (draft-ietf-scim-roles-entitlements): its
// catalogue, read with any of its tokens whatever their scopes (it is the product's, no user's or
// group's data). Only reads are routed: other methods answer 405 with a SCIM error (no-route.ts).
import type Router from '@koa/router';
import { respond } from '../http/respond.js';
import { NotFoundError } from '../http/scim-errors.js';
import { listParamsFromQuery, listParamsFromSearchRequest } from '../resources/list-params.js';
import type { ScimState } from '../resources/scim-state.js';
import {
  type CatalogueResourceType,
  entitlementResourceType,
  roleResourceType,
} from '../schema/roles-entitlements.js';
import { type CatalogueKind, effectiveCatalogue } from './catalogue.repository.js';
import { findEntry, listEntries } from './catalogue-resources.js';

const CATALOGUES: readonly (readonly [CatalogueResourceType, CatalogueKind])[] = [
  [roleResourceType, 'roles'],
  [entitlementResourceType, 'entitlements'],
];

export function registerCatalogueRoutes(router: Router<ScimState>): void {
  for (const [type, kind] of CATALOGUES) {
    const entries = (state: ScimState) => effectiveCatalogue(state.db, state.org.id, kind);

    router.get(type.endpoint, async (ctx) => {
      const params = listParamsFromQuery(ctx.query);
      respond(ctx, 200, listEntries(type, await entries(ctx.state), params, ctx.state.baseUrl));
    });

    // RFC 7644 §3.4.3: the same list with its parameters in the body.
    router.post(`${type.endpoint}/.search`, async (ctx) => {
      const params = listParamsFromSearchRequest(ctx.request.body);
      respond(ctx, 200, listEntries(type, await entries(ctx.state), params, ctx.state.baseUrl));
    });

    router.get(`${type.endpoint}/:id`, async (ctx) => {
      const found = findEntry(type, await entries(ctx.state), ctx.params.id!, ctx.state.baseUrl);
      if (!found) throw new NotFoundError(`${type.name} ${ctx.params.id} not found`);
      respond(ctx, 200, found);
    });
  }
}
