// The admin API's schema extensions of an organization, each change with its audit entry.
import type { Kysely } from 'kysely';
import type { Audited } from '../audit/audited-action.js';
import type { DB } from '../db/tables.js';
import type { Routes } from '../http/route-state.js';
import { changeOrgAuth } from '../orgs/auth-changes.js';
import type { TokenChecks } from '../orgs/scim-auth.js';
import * as schemas from './schemas.service.js';

export interface SchemaRoutesDeps {
  readonly db: Kysely<DB>;
  readonly tokenChecks: TokenChecks;
  readonly audited: Audited;
}

export function registerSchemaRoutes(router: Routes, { db, tokenChecks, audited }: SchemaRoutesDeps): void {
  router.get('/orgs/:orgId/schemas', async (ctx) => {
    ctx.body = { schemas: await schemas.listSchemas(db, ctx.params.orgId!) };
  });
  router.get('/orgs/:orgId/schemas/:urn', async (ctx) => {
    ctx.body = await schemas.getSchema(db, ctx.params.orgId!, ctx.params.urn!);
  });
  // A schema change reaches every process as a token change does: the token check carries the
  // organization's schema version (custom-schemas/org-registries.ts).
  router.put('/orgs/:orgId/schemas/:urn', audited('schema.put', 'urn'), async (ctx) => {
    const { orgId, urn } = ctx.params as { orgId: string; urn: string };
    const { schema, created } = await changeOrgAuth(db, tokenChecks, orgId, (trx) =>
      schemas.putSchema(trx, orgId, urn, ctx.request.body),
    );
    ctx.status = created ? 201 : 200;
    ctx.body = schema;
  });
  router.delete('/orgs/:orgId/schemas/:urn', audited('schema.delete', 'urn'), async (ctx) => {
    const { orgId, urn } = ctx.params as { orgId: string; urn: string };
    await changeOrgAuth(db, tokenChecks, orgId, (trx) => schemas.deleteSchema(trx, orgId, urn));
    ctx.status = 204;
  });
}
