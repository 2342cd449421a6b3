// The setup link's side of the console: an IT admin opens the link, chooses Okta or Entra, follows
// its steps with the organization's values, generates a token, and watches the first requests arrive.
// Everything here is limited to the link's organization, which the session carries.
import type Router from '@koa/router';
import type { Context } from 'koa';
import { listOrgSchemas } from '../custom-schemas/org-schemas.repository.js';
import { orgHealth } from '../health/sync-health.service.js';
import { notFound } from '../http/admin-errors.js';
import * as admin from '../orgs/orgs.service.js';
import { findLiveSetupLink, openSetupLink } from '../orgs/setup-links.repository.js';
import * as tokens from '../orgs/tokens.service.js';
import { hashSecret, looksLikeSecret, SETUP_LINK_PREFIX } from '../secrets.js';
import type { ConsoleState, ConsoleTools } from './console-deps.js';
import { type CustomUserAttribute, type IdpName, idpGuide, isIdpName } from './idp-guides.js';
import { seeOther, sendPage } from './respond.js';
import { guidePage, linkGonePage, linkPage, setupHomePage, statusFragment } from './views/setup.js';

/** Failed requests the IT admin sees. */
const FAILURES_SHOWN = 20;

export function registerSetupRoutes(router: Router<ConsoleState>, tools: ConsoleTools): void {
  const { db, publicUrl, audited } = tools;
  const linkOf = (ctx: Context) => (ctx.state as ConsoleState).session.setupLink!;

  const health = async (orgId: string) => {
    await tools.activity.flush();
    return orgHealth(db, orgId, new Date(), { idleAfterMs: tools.idleAfterMs, failures: FAILURES_SHOWN });
  };

  const liveLink = async (ctx: Context) => {
    const secret = (ctx.params as { secret: string }).secret;
    if (!looksLikeSecret(secret, SETUP_LINK_PREFIX)) return undefined;
    return ctx.method === 'GET'
      ? findLiveSetupLink(db, hashSecret(secret), new Date())
      : openSetupLink(db, hashSecret(secret), new Date());
  };

  // Opening a link changes nothing: mail scanners and link previews fetch it too. Its page posts back
  // from this site, so the session cookie (SameSite=Strict) it sets is sent on the pages after it.
  router.get('/link/:secret', async (ctx) => {
    const link = await liveLink(ctx);
    if (!link) return sendPage(ctx, linkGonePage(), 404);
    const org = await admin.getOrg(db, link.orgId);
    sendPage(ctx, linkPage(org.name, ctx.path));
  });

  // The link's secret is exchanged for a session cookie, so it stays out of later requests.
  router.post('/link/:secret', audited('setup_link.open'), async (ctx) => {
    const link = await liveLink(ctx);
    if (!link) return sendPage(ctx, linkGonePage(), 404);
    // Opened by no session yet: the link itself is who acts.
    Object.assign(ctx.state, { actor: `setup_link:${link.id}`, orgId: link.orgId, resourceId: link.id });
    await tools.sessions.start(ctx, 'setup', link);
    seeOther(ctx, '/console/setup');
  });

  router.get('/setup', async (ctx) => {
    const { orgId } = linkOf(ctx);
    const org = await admin.getOrg(db, orgId);
    sendPage(ctx, setupHomePage(org.name, await health(orgId)));
  });

  router.get('/setup/status', async (ctx) => {
    sendPage(ctx, statusFragment(await health(linkOf(ctx).orgId)).text);
  });

  const showGuide = async (ctx: Context, idp: IdpName, token?: string) => {
    const { orgId } = linkOf(ctx);
    const org = await admin.getOrg(db, orgId);
    const [stored, current] = await Promise.all([listOrgSchemas(db, orgId), health(orgId)]);
    const customAttributes: CustomUserAttribute[] = stored
      .filter(({ schema }) => schema.resourceType === 'User')
      .flatMap(({ schema }) => schema.attributes.map((attribute) => ({ schemaUrn: schema.id, attribute })));
    const view = admin.renderOrg(org, publicUrl);
    const page = guidePage({
      orgName: org.name,
      csrf: (ctx.state as ConsoleState).session.csrf,
      guide: idpGuide(idp, { scimBaseUrl: view.scimBaseUrl, groupSync: org.groupSync, customAttributes }),
      health: current,
      ...(token ? { token } : {}),
    });
    sendPage(ctx, page);
  };

  router.get('/setup/:idp', async (ctx) => {
    const idp = (ctx.params as { idp: string }).idp;
    if (!isIdpName(idp)) throw notFound(`No setup steps for ${idp}: choose Okta or Entra`);
    await showGuide(ctx, idp);
  });

  router.post('/setup/:idp/token', audited('token.create', 'created'), async (ctx) => {
    const idp = (ctx.params as { idp: string }).idp;
    if (!isIdpName(idp)) throw notFound(`No setup steps for ${idp}: choose Okta or Entra`);
    const { orgId, id } = linkOf(ctx);
    const { token, secret } = await db.transaction().execute((trx) =>
      tokens.createToken(trx, orgId, {
        name: `${idp === 'okta' ? 'Okta' : 'Entra'} (setup link ${id.slice(0, 8)})`,
      }),
    );
    ctx.state.resourceId = token.id;
    await showGuide(ctx, idp, secret);
  });
}
