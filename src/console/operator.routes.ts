// The operator's side of the console: sign-in with the admin token, organizations, tokens, setup
// links, settings, activity and webhooks. Every action goes through the admin services and the audit
// log, as the admin API's does.
import type Router from '@koa/router';
import type { Context } from 'koa';
import * as admin from '../admin/admin.service.js';
import * as schemas from '../admin/schemas.service.js';
import * as setupLinks from '../admin/setup-links.service.js';
import * as webhooks from '../admin/webhooks.service.js';
import { changeOrgAuth } from '../auth/auth-changes.js';
import { secretMatcher } from '../auth/bearer.js';
import { latestChanges } from '../changes/changes.repository.js';
import { orgHealth } from '../health/sync-health.service.js';
import type { ConsoleState, ConsoleTools } from './console-deps.js';
import { readable } from './views/layout.js';
import {
  activityPage,
  orgPage,
  orgsPage,
  type Revealed,
  signInPage,
  webhookPage,
  webhooksPage,
} from './views/operator.js';

type Form = Record<string, string | string[] | undefined>;
const formOf = (ctx: Context): Form => (ctx.request.body ?? {}) as Form;
/** A form field's single value ('' when absent). */
const field = (form: Form, name: string): string => {
  const value = form[name];
  return (Array.isArray(value) ? value[0] : value)?.trim() ?? '';
};
const checked = (form: Form, name: string) => field(form, name) === 'true';

export function registerOperatorRoutes(router: Router<ConsoleState>, tools: ConsoleTools): void {
  const { db, publicUrl } = tools;
  const isAdminToken = secretMatcher(tools.adminToken);
  const csrf = (ctx: Context) => (ctx.state as ConsoleState).session.csrf;
  const orgIdOf = (ctx: Context) => (ctx.params as { orgId: string }).orgId;

  router.get('/sign-in', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = signInPage();
  });
  router.post('/sign-in', async (ctx) => {
    if (!isAdminToken(field(formOf(ctx), 'adminToken'))) {
      ctx.status = 401;
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = signInPage('That is not this scimd’s admin token.');
      return;
    }
    await tools.sessions.start(ctx, 'operator');
    ctx.status = 303;
    ctx.redirect('/console');
  });
  router.post('/sign-out', async (ctx) => {
    await tools.sessions.end(ctx, 'operator');
    ctx.status = 303;
    ctx.redirect('/console/sign-in');
  });

  router.get('/', async (ctx) => {
    await tools.activity.flush();
    const now = new Date();
    const orgs = await admin.listOrgs(db);
    const summaries = await Promise.all(
      orgs.map(async (org) => {
        const health = await orgHealth(db, org.id, now, {
          idleAfterMs: tools.idleAfterMs,
          failures: 5,
          people: false,
        });
        return {
          org: admin.renderOrg(org, publicUrl),
          state: health.state,
          lastRequestAt: health.lastRequestAt,
        };
      }),
    );
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = orgsPage(csrf(ctx), summaries);
  });

  router.post('/orgs', async (ctx) => {
    const form = formOf(ctx);
    const org = await db.transaction().execute((trx) =>
      admin.createOrg(trx, {
        name: field(form, 'name'),
        groupSync: checked(form, 'groupSync'),
        deprovisioning: field(form, 'deprovisioning') || undefined,
      }),
    );
    await tools.audited(
      ctx,
      { orgId: org.id, action: 'org.create' },
      async () => org,
      (o) => o.id,
    );
    ctx.status = 303;
    ctx.redirect(`/console/orgs/${org.id}`);
  });

  /** The organization's page, with what the last action created shown once. */
  const showOrg = async (
    ctx: Context,
    orgId: string,
    extra: { revealed?: Revealed; notice?: string } = {},
  ) => {
    await tools.activity.flush();
    const org = await admin.getOrg(db, orgId);
    const [health, links, custom] = await Promise.all([
      orgHealth(db, orgId, new Date(), { idleAfterMs: tools.idleAfterMs, failures: 0 }),
      setupLinks.listSetupLinks(db, orgId),
      schemas.listSchemas(db, orgId),
    ]);
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = orgPage({
      csrf: csrf(ctx),
      org: admin.renderOrg(org, publicUrl),
      health,
      setupLinks: links.setupLinks,
      schemas: custom,
      ...extra,
    });
  };

  router.get('/orgs/:orgId', (ctx) => showOrg(ctx, orgIdOf(ctx), noticeOf(ctx)));

  router.post('/orgs/:orgId/settings', async (ctx) => {
    const orgId = orgIdOf(ctx);
    const form = formOf(ctx);
    await tools.audited(ctx, { orgId, action: 'org.update', resourceId: orgId }, () =>
      changeOrgAuth(db, tools.tokenChecks, orgId, (trx) =>
        admin.updateOrg(trx, orgId, {
          name: field(form, 'name'),
          groupSync: checked(form, 'groupSync'),
          deprovisioning: field(form, 'deprovisioning'),
        }),
      ),
    );
    seeOther(ctx, `/console/orgs/${orgId}?done=settings#settings`);
  });

  router.post('/orgs/:orgId/tokens', async (ctx) => {
    const orgId = orgIdOf(ctx);
    const form = formOf(ctx);
    const scopes = form.scopes === undefined ? [] : [form.scopes].flat();
    const expiresOn = field(form, 'expiresOn');
    const { token, secret } = await tools.audited(
      ctx,
      { orgId, action: 'token.create' },
      () =>
        db.transaction().execute((trx) =>
          admin.createToken(trx, orgId, {
            ...(field(form, 'name') ? { name: field(form, 'name') } : {}),
            scopes,
            ...(expiresOn ? { expiresAt: `${expiresOn}T23:59:59Z` } : {}),
          }),
        ),
      (created) => created.token.id,
    );
    await showOrg(ctx, orgId, {
      revealed: {
        label: `Token “${token.name}”`,
        value: secret,
        after: 'Paste it into the IdP as the bearer token (Okta: Authorization; Entra: Secret Token).',
      },
    });
  });

  router.post('/orgs/:orgId/tokens/:tokenId/rotate', async (ctx) => {
    const { orgId, tokenId } = ctx.params as { orgId: string; tokenId: string };
    const overlap = field(formOf(ctx), 'overlapSeconds');
    const { token, secret } = await tools.audited(
      ctx,
      { orgId, action: 'token.rotate', resourceId: tokenId },
      () =>
        changeOrgAuth(db, tools.tokenChecks, orgId, (trx) =>
          admin.rotateToken(trx, orgId, tokenId, overlap ? { overlapSeconds: Number(overlap) } : {}),
        ),
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

  router.post('/orgs/:orgId/tokens/:tokenId/revoke', async (ctx) => {
    const { orgId, tokenId } = ctx.params as { orgId: string; tokenId: string };
    const force = checked(formOf(ctx), 'force');
    await tools.audited(ctx, { orgId, action: 'token.revoke', resourceId: tokenId }, () =>
      changeOrgAuth(db, tools.tokenChecks, orgId, (trx) =>
        admin.revokeToken(trx, orgId, tokenId, force ? { force } : {}),
      ),
    );
    seeOther(ctx, `/console/orgs/${orgId}?done=token-revoked#tokens`);
  });

  router.post('/orgs/:orgId/setup-links', async (ctx) => {
    const orgId = orgIdOf(ctx);
    const form = formOf(ctx);
    const session = (ctx.state as ConsoleState).session;
    const link = await tools.audited(
      ctx,
      { orgId, action: 'setup_link.create' },
      () =>
        setupLinks.createSetupLink(
          db,
          orgId,
          {
            expiresInHours: Number(field(form, 'expiresInHours') || setupLinks.SETUP_LINK_HOURS.default),
            ...(field(form, 'note') ? { note: field(form, 'note') } : {}),
          },
          { publicUrl, createdBy: session.actor },
        ),
      (created) => created.id,
    );
    await showOrg(ctx, orgId, {
      revealed: {
        label: 'Setup link',
        value: link.url,
        after: `Send it to the customer’s IT admin. It works until ${readable(link.expiresAt)} unless you revoke it.`,
      },
    });
  });

  router.post('/orgs/:orgId/setup-links/:linkId/revoke', async (ctx) => {
    const { orgId, linkId } = ctx.params as { orgId: string; linkId: string };
    await tools.audited(ctx, { orgId, action: 'setup_link.revoke', resourceId: linkId }, () =>
      setupLinks.revokeSetupLink(db, orgId, linkId),
    );
    seeOther(ctx, `/console/orgs/${orgId}?done=link-revoked#setup-links`);
  });

  router.get('/orgs/:orgId/activity', async (ctx) => {
    const orgId = orgIdOf(ctx);
    await tools.activity.flush();
    const org = await admin.getOrg(db, orgId);
    const filter = {
      resourceId: String(ctx.query.resourceId ?? '').trim(),
      since: String(ctx.query.since ?? ''),
      until: String(ctx.query.until ?? ''),
    };
    const asInstant = (local: string) => (local ? new Date(`${local}Z`).toISOString() : undefined);
    const [health, audit, changes] = await Promise.all([
      orgHealth(db, orgId, new Date(), { idleAfterMs: tools.idleAfterMs, failures: 50, people: false }),
      admin.listEvents(db, orgId, {
        ...(filter.resourceId ? { resourceId: filter.resourceId } : {}),
        ...(filter.since ? { since: asInstant(filter.since) } : {}),
        ...(filter.until ? { until: asInstant(filter.until) } : {}),
        ...(ctx.query.cursor ? { cursor: String(ctx.query.cursor) } : {}),
      }),
      latestChanges(db, orgId, 20),
    ]);
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = activityPage({
      csrf: csrf(ctx),
      org: admin.renderOrg(org, publicUrl),
      failures: health.recentFailures,
      events: audit.events,
      nextCursor: audit.nextCursor,
      filter,
      changes,
    });
  });

  const webhookDeps = { db, ...tools.webhooks };
  router.get('/webhooks', async (ctx) => {
    const { webhooks: endpoints } = await webhooks.listEndpoints(webhookDeps);
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = webhooksPage(csrf(ctx), endpoints);
  });
  router.get('/webhooks/:webhookId', async (ctx) => {
    const id = (ctx.params as { webhookId: string }).webhookId;
    const endpoint = await webhooks.showEndpoint(webhookDeps, id);
    const { deliveries, nextCursor } = await webhooks.listDeliveries(webhookDeps, id, {
      ...(ctx.query.before ? { before: String(ctx.query.before) } : {}),
    });
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = webhookPage(csrf(ctx), endpoint, deliveries, nextCursor);
  });
}

function seeOther(ctx: Context, location: string): void {
  ctx.status = 303;
  ctx.redirect(location);
}

const NOTICES: Record<string, string> = {
  settings: 'Settings saved.',
  'token-revoked': 'Token revoked: requests with it are refused from now on.',
  'link-revoked': 'Setup link revoked: it no longer opens, and pages opened from it stop working.',
};

function noticeOf(ctx: Context): { notice?: string } {
  const notice = NOTICES[String(ctx.query.done ?? '')];
  return notice ? { notice } : {};
}
