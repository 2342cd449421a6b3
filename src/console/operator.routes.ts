// The operator's side of the console: sign-in with the admin token, organizations, tokens, setup
// links, settings, activity and webhooks. Every action goes through the admin services and the audit
// log, as the admin API's does.
import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { listEvents, subjectsOf } from '../audit/audit-events.service.js';
import { latestChanges } from '../changes/changes.repository.js';
import * as schemas from '../custom-schemas/schemas.service.js';
import { orgHealth } from '../health/sync-health.service.js';
import { invalidRequest } from '../http/admin-errors.js';
import { secretMatcher } from '../http/bearer.js';
import { changeOrgAuth } from '../orgs/auth-changes.js';
import * as admin from '../orgs/orgs.service.js';
import * as setupLinks from '../orgs/setup-links.service.js';
import * as tokens from '../orgs/tokens.service.js';
import * as webhooks from '../webhooks/webhooks.service.js';
import type { ConsoleState, ConsoleTools } from './console-deps.js';
import { checked, field, fields, seeOther, sendPage } from './respond.js';
import { activityPage } from './views/activity.js';
import { confirmRevokeLinkPage, confirmRevokeTokenPage, recentlyUsed } from './views/confirm.js';
import { readable } from './views/layout.js';
import {
  type OrgSummary,
  operatorNav,
  orgPage,
  orgsPage,
  type Revealed,
  signInPage,
  webhookPage,
  webhooksPage,
} from './views/operator.js';
import { count } from './views/words.js';

/** Organizations whose health the front page reads at once. */
const HEALTH_READS_AT_ONCE = 4;

export function registerOperatorRoutes(router: Router<ConsoleState>, tools: ConsoleTools): void {
  const { db, publicUrl, audited } = tools;
  const isAdminToken = secretMatcher(tools.adminToken);
  const csrf = (ctx: Context) => (ctx.state as ConsoleState).session.csrf;
  const health = (orgId: string, options: { failures: number; people?: boolean }) =>
    orgHealth(db, orgId, new Date(), { idleAfterMs: tools.idleAfterMs, ...options });
  const orgIdOf = (ctx: Context) => (ctx.params as { orgId: string }).orgId;

  router.get('/sign-in', (ctx) => sendPage(ctx, signInPage()));
  router.post('/sign-in', async (ctx) => {
    // Every attempt of a client that failed too often is refused, a right one too: guessing stops.
    const wait = tools.signInThrottle.retryAfterSeconds(ctx.ip);
    if (wait !== undefined) {
      ctx.set('Retry-After', String(wait));
      const why = `Too many wrong admin tokens from this address: try again in ${count(wait, 'second')}.`;
      return sendPage(ctx, signInPage(why), 429);
    }
    if (!isAdminToken(field(ctx, 'adminToken'))) {
      tools.signInThrottle.failed(ctx.ip);
      return sendPage(ctx, signInPage('That is not this scimd’s admin token.'), 401);
    }
    tools.signInThrottle.succeeded(ctx.ip);
    await tools.sessions.start(ctx, 'operator');
    seeOther(ctx, '/console');
  });
  router.post('/sign-out', async (ctx) => {
    await tools.sessions.end(ctx, 'operator');
    seeOther(ctx, '/console/sign-in');
  });

  router.get('/', async (ctx) => {
    await tools.activity.flush();
    const orgs = await admin.listOrgs(db);
    const summaries: OrgSummary[] = [];
    // A few at a time, so a long list does not take every connection of the pool.
    for (let i = 0; i < orgs.length; i += HEALTH_READS_AT_ONCE) {
      const some = orgs.slice(i, i + HEALTH_READS_AT_ONCE);
      const states = await Promise.all(some.map((org) => health(org.id, { failures: 5, people: false })));
      for (const [j, org] of some.entries()) {
        const { state, lastRequestAt } = states[j]!;
        summaries.push({ org: admin.renderOrg(org, publicUrl), state, lastRequestAt });
      }
    }
    sendPage(ctx, orgsPage(csrf(ctx), summaries));
  });

  router.post('/orgs', audited('org.create', 'created'), async (ctx) => {
    const org = await db.transaction().execute((trx) =>
      admin.createOrg(trx, {
        name: field(ctx, 'name'),
        groupSync: checked(ctx, 'groupSync'),
        deprovisioning: field(ctx, 'deprovisioning') || undefined,
      }),
    );
    ctx.state.resourceId = org.id;
    seeOther(ctx, `/console/orgs/${org.id}`);
  });

  /** The organization's page, with what the last action created shown once. */
  const showOrg = async (
    ctx: Context,
    orgId: string,
    extra: { revealed?: Revealed; notice?: string } = {},
  ) => {
    await tools.activity.flush();
    const org = await admin.getOrg(db, orgId);
    const [current, links, custom] = await Promise.all([
      health(orgId, { failures: 0 }),
      setupLinks.listSetupLinks(db, orgId),
      schemas.listSchemas(db, orgId),
    ]);
    const page = orgPage({
      csrf: csrf(ctx),
      org: admin.renderOrg(org, publicUrl),
      health: current,
      setupLinks: links.setupLinks,
      schemas: custom,
      ...extra,
    });
    sendPage(ctx, page);
  };

  router.get('/orgs/:orgId', (ctx) => showOrg(ctx, orgIdOf(ctx), noticeOf(ctx)));

  router.post('/orgs/:orgId/settings', audited('org.update'), async (ctx) => {
    const orgId = orgIdOf(ctx);
    await changeOrgAuth(db, tools.tokenChecks, orgId, (trx) =>
      admin.updateOrg(trx, orgId, {
        name: field(ctx, 'name'),
        groupSync: checked(ctx, 'groupSync'),
        deprovisioning: field(ctx, 'deprovisioning'),
      }),
    );
    seeOther(ctx, `/console/orgs/${orgId}?done=settings#settings`);
  });

  router.post('/orgs/:orgId/tokens', audited('token.create', 'created'), async (ctx) => {
    const orgId = orgIdOf(ctx);
    const name = field(ctx, 'name');
    const expiresOn = field(ctx, 'expiresOn');
    const { token, secret } = await db.transaction().execute((trx) =>
      tokens.createToken(trx, orgId, {
        ...(name ? { name } : {}),
        scopes: fields(ctx, 'scopes'),
        ...(expiresOn ? { expiresAt: `${expiresOn}T23:59:59Z` } : {}),
      }),
    );
    ctx.state.resourceId = token.id;
    await showOrg(ctx, orgId, {
      revealed: {
        label: `Token “${token.name}”`,
        value: secret,
        after: 'Paste it into the IdP as the bearer token (Okta: Authorization; Entra: Secret Token).',
      },
    });
  });

  router.post('/orgs/:orgId/tokens/:tokenId/rotate', audited('token.rotate', 'tokenId'), async (ctx) => {
    const { orgId, tokenId } = ctx.params as { orgId: string; tokenId: string };
    const overlap = field(ctx, 'overlapSeconds');
    const { token, secret } = await changeOrgAuth(db, tools.tokenChecks, orgId, (trx) =>
      tokens.rotateToken(trx, orgId, tokenId, overlap ? { overlapSeconds: Number(overlap) } : {}),
    );
    await showOrg(ctx, orgId, {
      revealed: {
        label: `The new token “${token.name}”`,
        value: secret,
        after:
          'Put it in the IdP, run a synchronization, then revoke the old token (it works on until then, or until the overlap ends).',
      },
    });
  });

  /**
   * Revoking a token used in the last 24 hours, or a setup link, takes a form's `confirm`: without it
   * (no script to ask first) the answer is a page asking, and nothing is revoked or audited.
   */
  const confirmFirst =
    (ask: (ctx: Context, orgId: string) => Promise<string | undefined>): Middleware =>
    async (ctx, next) => {
      const question = checked(ctx, 'confirm') ? undefined : await ask(ctx, orgIdOf(ctx));
      if (question === undefined) return next();
      sendPage(ctx, question);
    };

  router.post(
    '/orgs/:orgId/tokens/:tokenId/revoke',
    confirmFirst(async (ctx, orgId) => {
      const { tokenId } = ctx.params as { tokenId: string };
      await tools.activity.flush();
      const now = new Date();
      const token = (await tokens.listTokens(db, orgId)).find((t) => t.id === tokenId.toLowerCase());
      // One unknown, revoked already or idle is left to the service (404, nothing to do, or done).
      if (!token || token.revokedAt) return undefined;
      const view = tokens.renderToken(token);
      if (!recentlyUsed(view, now)) return undefined;
      const org = admin.renderOrg(await admin.getOrg(db, orgId), publicUrl);
      const force = checked(ctx, 'force');
      return confirmRevokeTokenPage({
        csrf: csrf(ctx),
        nav: operatorNav(csrf(ctx)),
        org,
        token: view,
        force,
        now,
      });
    }),
    audited('token.revoke', 'tokenId'),
    async (ctx) => {
      const { orgId, tokenId } = ctx.params as { orgId: string; tokenId: string };
      const force = checked(ctx, 'force');
      await changeOrgAuth(db, tools.tokenChecks, orgId, (trx) =>
        tokens.revokeToken(trx, orgId, tokenId, force ? { force } : {}),
      );
      seeOther(ctx, `/console/orgs/${orgId}?done=token-revoked#tokens`);
    },
  );

  router.post('/orgs/:orgId/setup-links', audited('setup_link.create', 'created'), async (ctx) => {
    const orgId = orgIdOf(ctx);
    const note = field(ctx, 'note');
    const session = (ctx.state as ConsoleState).session;
    const link = await setupLinks.createSetupLink(
      db,
      orgId,
      {
        expiresInHours: Number(field(ctx, 'expiresInHours') || setupLinks.SETUP_LINK_HOURS.default),
        ...(note ? { note } : {}),
      },
      { publicUrl, createdBy: session.actor },
    );
    ctx.state.resourceId = link.id;
    await showOrg(ctx, orgId, {
      revealed: {
        label: 'Setup link',
        value: link.url,
        after: `Send it to the customer’s IT admin. It works until ${readable(link.expiresAt)} unless you revoke it.`,
      },
    });
  });

  router.post(
    '/orgs/:orgId/setup-links/:linkId/revoke',
    confirmFirst(async (ctx, orgId) => {
      const { linkId } = ctx.params as { linkId: string };
      const { setupLinks: links } = await setupLinks.listSetupLinks(db, orgId);
      const link = links.find((l) => l.id === linkId.toLowerCase());
      if (link?.state !== 'active') return undefined;
      const org = admin.renderOrg(await admin.getOrg(db, orgId), publicUrl);
      return confirmRevokeLinkPage({
        csrf: csrf(ctx),
        nav: operatorNav(csrf(ctx)),
        org,
        link,
        now: new Date(),
      });
    }),
    audited('setup_link.revoke', 'linkId'),
    async (ctx) => {
      const { orgId, linkId } = ctx.params as { orgId: string; linkId: string };
      await setupLinks.revokeSetupLink(db, orgId, linkId);
      seeOther(ctx, `/console/orgs/${orgId}?done=link-revoked#setup-links`);
    },
  );

  router.get('/orgs/:orgId/activity', async (ctx) => {
    const orgId = orgIdOf(ctx);
    await tools.activity.flush();
    const org = await admin.getOrg(db, orgId);
    const filter = {
      resourceId: String(ctx.query.resourceId ?? '').trim(),
      since: String(ctx.query.since ?? ''),
      until: String(ctx.query.until ?? ''),
    };
    const [current, audit, changes] = await Promise.all([
      health(orgId, { failures: 50, people: false }),
      listEvents(db, orgId, {
        ...(filter.resourceId ? { resourceId: filter.resourceId } : {}),
        ...(filter.since ? { since: instantOf('since', filter.since) } : {}),
        ...(filter.until ? { until: instantOf('until', filter.until) } : {}),
        ...(ctx.query.cursor ? { cursor: String(ctx.query.cursor) } : {}),
      }),
      latestChanges(db, orgId, 20),
    ]);
    const page = activityPage({
      csrf: csrf(ctx),
      org: admin.renderOrg(org, publicUrl),
      failures: current.recentFailures,
      events: audit.events,
      subjects: await subjectsOf(db, orgId, audit.events),
      nextCursor: audit.nextCursor,
      filter,
      changes,
    });
    sendPage(ctx, page);
  });

  const webhookDeps = { db, ...tools.webhooks };
  router.get('/webhooks', async (ctx) => {
    const { webhooks: endpoints } = await webhooks.listEndpoints(webhookDeps);
    sendPage(ctx, webhooksPage(csrf(ctx), endpoints));
  });
  router.get('/webhooks/:webhookId', async (ctx) => {
    const id = (ctx.params as { webhookId: string }).webhookId;
    const endpoint = await webhooks.showEndpoint(webhookDeps, id);
    const { deliveries, nextCursor } = await webhooks.listDeliveries(webhookDeps, id, {
      ...(ctx.query.before ? { before: String(ctx.query.before) } : {}),
    });
    sendPage(ctx, webhookPage(csrf(ctx), endpoint, deliveries, nextCursor));
  });
}

/** A time from a datetime-local field (read as UTC), as the audit log's query takes it. */
function instantOf(name: string, local: string): string {
  const at = new Date(`${local}Z`);
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(local) || Number.isNaN(at.getTime()))
    throw invalidRequest(`${name}: give a date and time such as 2026-11-26T09:30`);
  return at.toISOString();
}

const NOTICES: Record<string, string> = {
  settings: 'Settings saved.',
  'token-revoked': 'Token revoked: requests with it are refused from now on.',
  'link-revoked':
    'Setup link revoked: it no longer opens, and pages opened from it stop working. Tokens created through it ' +
    'keep working: revoke them under Tokens if they should not.',
};

function noticeOf(ctx: Context): { notice?: string } {
  const notice = NOTICES[String(ctx.query.done ?? '')];
  return notice ? { notice } : {};
}
