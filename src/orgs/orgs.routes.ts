// The admin API's organizations and their tokens, each action with its audit entry.
import type { Kysely } from 'kysely';
import type { Audited } from '../audit/audited-action.js';
import type { ChangeFeed } from '../changes/change-feed.js';
import type { DB } from '../db/tables.js';
import type { Routes } from '../http/route-state.js';
import { changeOrgAuth } from './auth-changes.js';
import * as orgs from './orgs.service.js';
import type { TokenChecks } from './scim-auth.js';
import * as tokens from './tokens.service.js';

export interface OrgRoutesDeps {
  readonly db: Kysely<DB>;
  readonly publicUrl: string;
  readonly tokenChecks: TokenChecks;
  readonly changes: Pick<ChangeFeed, 'written'>;
  readonly audited: Audited;
}

export function registerOrgRoutes(router: Routes, deps: OrgRoutesDeps): void {
  const { db, publicUrl, audited } = deps;
  const changeAuth = <T>(orgId: string, change: (trx: Kysely<DB>) => Promise<T>) =>
    changeOrgAuth(db, deps.tokenChecks, orgId, change);

  router.post('/orgs', audited('org.create', 'created'), async (ctx) => {
    const org = await db.transaction().execute((trx) => orgs.createOrg(trx, ctx.request.body));
    ctx.status = 201;
    ctx.body = orgs.renderOrg(org, publicUrl);
  });
  router.get('/orgs', async (ctx) => {
    ctx.body = { orgs: (await orgs.listOrgs(db)).map((o) => orgs.renderOrg(o, publicUrl)) };
  });
  router.get('/orgs/:orgId', async (ctx) => {
    ctx.body = orgs.renderOrg(await orgs.getOrg(db, ctx.params.orgId!), publicUrl);
  });
  router.patch('/orgs/:orgId', audited('org.update'), async (ctx) => {
    const orgId = ctx.params.orgId!;
    const org = await changeAuth(orgId, (trx) => orgs.updateOrg(trx, orgId, ctx.request.body));
    ctx.body = orgs.renderOrg(org, publicUrl);
  });
  router.delete('/orgs/:orgId', audited('org.delete'), async (ctx) => {
    const orgId = ctx.params.orgId!;
    await changeAuth(orgId, (trx) => orgs.deleteOrg(trx, orgId));
    deps.changes.written();
    ctx.status = 204;
  });

  router.post('/orgs/:orgId/tokens', audited('token.create', 'created'), async (ctx) => {
    const { token, secret } = await db
      .transaction()
      .execute((trx) => tokens.createToken(trx, ctx.params.orgId!, ctx.request.body));
    ctx.status = 201;
    ctx.body = { ...tokens.renderToken(token), token: secret };
  });
  router.get('/orgs/:orgId/tokens', async (ctx) => {
    ctx.body = { tokens: (await tokens.listTokens(db, ctx.params.orgId!)).map(tokens.renderToken) };
  });
  router.post('/orgs/:orgId/tokens/:tokenId/rotate', audited('token.rotate', 'tokenId'), async (ctx) => {
    const { orgId, tokenId } = ctx.params as { orgId: string; tokenId: string };
    const { token, secret } = await changeAuth(orgId, (trx) =>
      tokens.rotateToken(trx, orgId, tokenId, ctx.request.body),
    );
    ctx.status = 201;
    ctx.body = { ...tokens.renderToken(token), token: secret };
  });
  router.post('/orgs/:orgId/tokens/:tokenId/revoke', audited('token.revoke', 'tokenId'), async (ctx) => {
    const { orgId, tokenId } = ctx.params as { orgId: string; tokenId: string };
    const token = await changeAuth(orgId, (trx) => tokens.revokeToken(trx, orgId, tokenId, ctx.request.body));
    ctx.body = tokens.renderToken(token);
  });
}
