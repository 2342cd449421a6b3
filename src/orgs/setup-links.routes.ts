// The admin API's setup links of an organization, each action with its audit entry.
import type { Kysely } from 'kysely';
import type { Audited } from '../audit/audited-action.js';
import type { DB } from '../db/tables.js';
import type { Routes } from '../http/route-state.js';
import * as setupLinks from './setup-links.service.js';

export interface SetupLinkRoutesDeps {
  readonly db: Kysely<DB>;
  readonly publicUrl: string;
  readonly audited: Audited;
}

export function registerSetupLinkRoutes(router: Routes, { db, publicUrl, audited }: SetupLinkRoutesDeps) {
  router.post('/orgs/:orgId/setup-links', audited('setup_link.create', 'created'), async (ctx) => {
    const link = await setupLinks.createSetupLink(db, ctx.params.orgId!, ctx.request.body, {
      publicUrl,
      createdBy: 'admin',
    });
    ctx.status = 201;
    ctx.body = link;
  });
  router.get('/orgs/:orgId/setup-links', async (ctx) => {
    ctx.body = await setupLinks.listSetupLinks(db, ctx.params.orgId!);
  });
  router.post(
    '/orgs/:orgId/setup-links/:linkId/revoke',
    audited('setup_link.revoke', 'linkId'),
    async (ctx) => {
      ctx.body = await setupLinks.revokeSetupLink(db, ctx.params.orgId!, ctx.params.linkId!);
    },
  );
}
