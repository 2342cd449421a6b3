// The admin API's roles and entitlements: the environment's catalogues, an organization's own, its
// role mappings, and a user's effective values; each change with its audit entry.
import type { Kysely } from 'kysely';
import type { Audited } from '../audit/audited-action.js';
import type { DB } from '../db/tables.js';
import type { Routes } from '../http/route-state.js';
import * as roles from './roles.service.js';

export interface RoleRoutesDeps {
  readonly db: Kysely<DB>;
  readonly audited: Audited;
}

export function registerRoleRoutes(router: Routes, { db, audited }: RoleRoutesDeps): void {
  for (const kind of ['roles', 'entitlements'] as const) {
    router.get(`/${kind}`, async (ctx) => {
      ctx.body = await roles.environmentCatalogue(db, kind);
    });
    router.put(`/${kind}`, audited(`${kind}.put`), async (ctx) => {
      ctx.body = await roles.putEnvironmentCatalogue(db, kind, ctx.request.body);
    });
    router.get(`/orgs/:orgId/${kind}`, async (ctx) => {
      ctx.body = await roles.orgCatalogue(db, ctx.params.orgId!, kind);
    });
    router.put(`/orgs/:orgId/${kind}`, audited(`${kind}.put`), async (ctx) => {
      ctx.body = await roles.putOrgCatalogue(db, ctx.params.orgId!, kind, ctx.request.body);
    });
  }
  router.get('/orgs/:orgId/role-mappings', async (ctx) => {
    ctx.body = await roles.mappings(db, ctx.params.orgId!);
  });
  router.put('/orgs/:orgId/role-mappings', audited('role_mappings.put'), async (ctx) => {
    ctx.body = await roles.putMappings(db, ctx.params.orgId!, ctx.request.body);
  });
  router.get('/orgs/:orgId/users/:userId/roles', async (ctx) => {
    ctx.body = await roles.userAccess(db, ctx.params.orgId!, ctx.params.userId!);
  });
}
