// The setup link's side of the console: an IT admin opens the link, chooses Okta or Entra, follows
// its steps with the organization's values, generates a token, and watches the first requests, users
// and groups arrive. Everything here is limited to the link's organization, which the session carries.
// The pages carry the operator's brand (tools.brand).
import type Router from '@koa/router';
import type { Context } from 'koa';
import { listOrgSchemas } from '../custom-schemas/org-schemas.repository.js';
import { orgHealth } from '../health/sync-health.service.js';
import { notFound } from '../http/admin-errors.js';
import * as admin from '../orgs/orgs.service.js';
import { findLiveSetupLink, openSetupLink } from '../orgs/setup-links.repository.js';
import * as tokens from '../orgs/tokens.service.js';
import { latestArrivals } from '../resources/arrivals.repository.js';
import * as roles from '../roles/roles.service.js';
import { hashSecret, looksLikeSecret, SETUP_LINK_PREFIX } from '../secrets.js';
import type { ConsoleState, ConsoleTools } from './console-deps.js';
import { type CustomUserAttribute, type IdpName, idpGuide, isIdpName } from './idp-guides.js';
import { seeOther, sendPage } from './respond.js';
import {
  type Connection,
  guidePage,
  linkGonePage,
  linkPage,
  setupHomePage,
  statusFragment,
} from './views/setup.js';

/** Failed requests the IT admin sees. */
const FAILURES_SHOWN = 20;
/** The newest users, and groups, the connection panel lists. */
const ARRIVALS_SHOWN = 10;

export function registerSetupRoutes(router: Router<ConsoleState>, tools: ConsoleTools): void {
  const { db, publicUrl, audited, brand } = tools;
  const linkOf = (ctx: Context) => (ctx.state as ConsoleState).session.setupLink!;

  // Read every 2 seconds while a setup page is open: nothing here counts the organization's rows (the
  // totals are the kept counts, and the health's own count of people is left out).
  const connection = async (orgId: string, groupSync: boolean): Promise<Connection> => {
    await tools.activity.flush();
    const now = new Date();
    const health = await orgHealth(db, orgId, now, {
      idleAfterMs: tools.idleAfterMs,
      failures: FAILURES_SHOWN,
      people: false,
    });
    const arrivals =
      health.lastSuccessAt === null
        ? undefined
        : await latestArrivals(db, orgId, { limit: ARRIVALS_SHOWN, groups: groupSync });
    return { health, arrivals, groupSync, now };
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
    if (!link) return sendPage(ctx, linkGonePage(brand), 404);
    const org = await admin.getOrg(db, link.orgId);
    sendPage(ctx, linkPage(brand, org.name));
  });

  // The link's secret is exchanged for a session cookie, so it stays out of later requests.
  router.post('/link/:secret', audited('setup_link.open'), async (ctx) => {
    const link = await liveLink(ctx);
    if (!link) return sendPage(ctx, linkGonePage(brand), 404);
    // Opened by no session yet: the link itself is who acts.
    Object.assign(ctx.state, { actor: `setup_link:${link.id}`, orgId: link.orgId, resourceId: link.id });
    await tools.sessions.start(ctx, 'setup', link);
    seeOther(ctx, '/console/setup');
  });

  /** The organization's catalogue as the guides name it; roles to map groups to while it has some. */
  const catalogueOf = async (orgId: string) => {
    const [{ roles: entries = [] }, { entitlements = [] }] = await Promise.all([
      roles.orgCatalogue(db, orgId, 'roles'),
      roles.orgCatalogue(db, orgId, 'entitlements'),
    ]);
    return {
      roles: entries.map((r) => ({ value: r.value, displayName: r.displayName })),
      entitlements: entitlements.length > 0,
    };
  };

  router.get('/setup', async (ctx) => {
    const { orgId } = linkOf(ctx);
    const org = await admin.getOrg(db, orgId);
    const [current, catalogue] = await Promise.all([connection(orgId, org.groupSync), catalogueOf(orgId)]);
    sendPage(ctx, setupHomePage(brand, org.name, current, catalogue.roles.length > 0));
  });

  router.get('/setup/status', async (ctx) => {
    const org = await admin.getOrg(db, linkOf(ctx).orgId);
    sendPage(ctx, statusFragment(await connection(org.id, org.groupSync)).text);
  });

  const showGuide = async (ctx: Context, idp: IdpName, token?: string) => {
    const { orgId } = linkOf(ctx);
    const org = await admin.getOrg(db, orgId);
    const [stored, current, catalogue] = await Promise.all([
      listOrgSchemas(db, orgId),
      connection(orgId, org.groupSync),
      catalogueOf(orgId),
    ]);
    const customAttributes: CustomUserAttribute[] = stored
      .filter(({ schema }) => schema.resourceType === 'User')
      .flatMap(({ schema }) => schema.attributes.map((attribute) => ({ schemaUrn: schema.id, attribute })));
    const view = admin.renderOrg(org, publicUrl);
    const page = guidePage({
      brand,
      orgName: org.name,
      csrf: (ctx.state as ConsoleState).session.csrf,
      guide: idpGuide(idp, {
        scimBaseUrl: view.scimBaseUrl,
        groupSync: org.groupSync,
        customAttributes,
        catalogue,
      }),
      connection: current,
      mapRoles: catalogue.roles.length > 0,
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
