// The operator's pages: organizations with their sync health, one organization (base URL, tokens,
// setup links, settings, schemas), webhooks; its activity is in activity.ts.

import type { SchemaView } from '../../custom-schemas/schemas.service.js';
import type { OrgHealth as Health } from '../../health/sync-health.service.js';
import type { OrgView } from '../../orgs/orgs.service.js';
import type { SetupLinkView } from '../../orgs/setup-links.service.js';
import type { renderToken } from '../../orgs/tokens.service.js';
import type { DeliveryView } from '../../webhooks/deliveries.repository.js';
import { type Html, html } from '../html.js';
import { askFirst, recentlyUsed, revokeLinkQuestion, revokeTokenQuestion } from './confirm.js';
import { badge, copyable, csrfField, notice, page, revealed, when } from './layout.js';
import { dataTable } from './table.js';
import { count, withLongTokens } from './words.js';

type TokenView = ReturnType<typeof renderToken> & { expiresSoon?: boolean };

export function operatorNav(csrf: string): Html {
  return html`<nav aria-label="Console"><a href="/console">Organizations</a><a href="/console/webhooks">Webhooks</a></nav>
<form method="post" action="/console/sign-out">${csrfField(csrf)}<button class="secondary">Sign out</button></form>`;
}

export function signInPage(error?: string): string {
  return page({
    title: 'Sign in',
    body: html`<h1>Sign in</h1>
<p class="lead">The console of this scimd. Operators sign in with its admin token: the value of <code>SCIMD_ADMIN_TOKEN</code>, or, when that is not set, the token scimd generated at its first start in <code>data/admin-token</code> (<code>$DATA_DIR/admin-token</code>).</p>
${error ? notice('bad', error) : ''}
<form class="stack" method="post" action="/console/sign-in">
<input type="text" name="username" value="admin" autocomplete="username" hidden>
<label>Admin token <input type="password" name="adminToken" autocomplete="current-password" required autofocus></label>
<div><button>Sign in</button></div>
</form>`,
  });
}

export interface OrgSummary {
  readonly org: OrgView;
  readonly state: string;
  readonly lastRequestAt: string | null;
}

export function orgsPage(csrf: string, orgs: readonly OrgSummary[]): string {
  return page({
    title: 'Organizations',
    nav: operatorNav(csrf),
    body: html`<h1>Organizations</h1>
${
  orgs.length === 0
    ? html`<p>No organization yet: create the first below.</p>`
    : dataTable(
        ['Name', 'Sync health', 'Last request', 'Group sync', 'Deprovisioning'],
        orgs.map(({ org, state, lastRequestAt }) => [
          html`<a href="/console/orgs/${org.id}">${org.name}</a>`,
          badge(state),
          when(lastRequestAt),
          org.groupSync ? 'on' : 'off',
          org.deprovisioning,
        ]),
      )
}
<h2 id="new-org">New organization</h2>
<form class="stack" method="post" action="/console/orgs">${csrfField(csrf)}
<label>Name <input name="name" required maxlength="200"></label>
<label class="check"><input type="checkbox" name="groupSync" value="true"> Group sync (accept groups from the IdP)</label>
${deprovisioningSelect('deactivate')}
<div><button>Create organization</button></div>
</form>`,
  });
}

function deprovisioningSelect(current: string): Html {
  const option = (value: string, label: string) =>
    html`<option value="${value}"${current === value ? html` selected` : ''}>${label}</option>`;
  return html`<label>When the IdP deletes a user <select name="deprovisioning">
${option('deactivate', 'deactivate it (keep its data)')}
${option('anonymize', 'anonymize it (keep the row, drop personal data)')}
${option('delete', 'delete it')}
</select></label>`;
}

/** A secret that the last action created, shown once. */
export interface Revealed {
  readonly label: string;
  readonly value: string;
  readonly after: string;
}

export interface OrgPageData {
  readonly csrf: string;
  readonly org: OrgView;
  readonly health: Health;
  readonly setupLinks: readonly SetupLinkView[];
  readonly schemas: readonly SchemaView[];
  readonly revealed?: Revealed;
  readonly notice?: string;
}

export function orgPage(data: OrgPageData): string {
  const { csrf, org, health } = data;
  return page({
    title: org.name,
    nav: operatorNav(csrf),
    body: html`<h1>${org.name}</h1>
<p class="lead">Organization <code>${org.id}</code> · <a href="/console/orgs/${org.id}/activity">Activity: failed requests, audit log, changes</a>
· <a href="/console/orgs/${org.id}/roles">Roles: catalogue, group mappings, a user’s roles</a></p>
${data.notice ? notice('ok', data.notice) : ''}
${data.revealed ? revealed(data.revealed.label, data.revealed.value, data.revealed.after) : ''}
<h2>SCIM base URL</h2>
<p>${copyable('base-url', org.scimBaseUrl)}</p>
<h2>Sync health</h2>
${healthSummary(health)}
<h2 id="setup-links">Setup links</h2>
<p>A link for the customer’s IT admin: without an account, they choose Okta or Entra, follow the steps with
this organization’s values filled in, generate a token, and watch the first requests arrive. A link can create
tokens and read this organization’s sync health and failed requests, nothing else.</p>
${setupLinksTable(csrf, org.id, data.setupLinks)}
<form class="row" method="post" action="/console/orgs/${org.id}/setup-links">${csrfField(csrf)}
<label>Valid for <select name="expiresInHours">
<option value="24">1 day</option><option value="72" selected>3 days</option><option value="168">7 days</option>
</select></label>
<label>Note <input name="note" maxlength="200" placeholder="e.g. for Acme’s IT team"></label>
<button>Create setup link</button>
</form>
<h2 id="tokens">Tokens</h2>
${tokensTable(csrf, org.id, health.tokens)}
<h3>New token</h3>
<form class="row" method="post" action="/console/orgs/${org.id}/tokens">${csrfField(csrf)}
<label>Name <input name="name" maxlength="200" placeholder="e.g. Okta production"></label>
<label class="check"><input type="checkbox" name="scopes" value="users" checked> users</label>
<label class="check"><input type="checkbox" name="scopes" value="groups" checked> groups</label>
<label>Expires (optional) <input type="date" name="expiresOn"></label>
<button>Create token</button>
</form>
<h2 id="settings">Settings</h2>
<form class="stack" method="post" action="/console/orgs/${org.id}/settings">${csrfField(csrf)}
<label>Name <input name="name" required maxlength="200" value="${org.name}"></label>
<label class="check"><input type="checkbox" name="groupSync" value="true"${org.groupSync ? html` checked` : ''}> Group sync (accept groups from the IdP)</label>
${deprovisioningSelect(org.deprovisioning)}
<div><button>Save settings</button></div>
</form>
<h2 id="schemas">Custom schemas</h2>
${schemasList(data.schemas)}`,
  });
}

function healthSummary(health: Health): Html {
  const { users } = health;
  return html`<p>${badge(health.state)} ${withLongTokens(health.reasons.join(' '))}</p>
<dl class="facts">
<dt>Last request</dt><dd>${when(health.lastRequestAt)}</dd>
<dt>Last success</dt><dd>${when(health.lastSuccessAt)}</dd>
${users ? html`<dt>People</dt><dd>${count(users.active, 'active user')}, ${count(users.inactive, 'inactive user')}, ${count(users.deprovisioned, 'deprovisioned user')}; ${count(health.groups ?? 0, 'group')}</dd>` : ''}
</dl>`;
}

function setupLinksTable(csrf: string, orgId: string, links: readonly SetupLinkView[]): Html {
  if (links.length === 0) return html`<p class="muted">No setup link yet.</p>`;
  const now = new Date();
  const revoke = (link: SetupLinkView) =>
    link.state === 'active'
      ? html`<form class="inline" method="post" action="/console/orgs/${orgId}/setup-links/${link.id}/revoke"${askFirst(revokeLinkQuestion(link, now))}>${csrfField(csrf)}<button class="danger" aria-label="Revoke setup link ${link.prefix}">Revoke</button></form>`
      : '';
  return dataTable(
    ['Link', 'State', 'Note', 'Expires', 'Last opened', { label: 'Action', actions: true }],
    links.map((link) => [
      html`<code class="prefix">${link.prefix}…</code>`,
      badge(link.state),
      link.note,
      when(link.expiresAt),
      when(link.lastOpenedAt),
      revoke(link),
    ]),
  );
}

function tokenState(token: TokenView): string {
  if (token.revokedAt) return 'revoked';
  if (token.expiresAt && new Date(token.expiresAt) <= new Date()) return 'expired';
  return 'active';
}

function tokensTable(csrf: string, orgId: string, tokens: readonly TokenView[]): Html {
  if (tokens.length === 0)
    return html`<p class="muted">No token yet: create one below, or send a setup link and let the IT admin create it.</p>`;
  const now = new Date();
  const replacementOf = (id: string) => {
    const replacement = tokens.find((t) => t.id === id);
    return replacement ? html`<code class="prefix">${replacement.prefix}…</code>` : 'another token';
  };
  const actions = (token: TokenView) => {
    if (tokenState(token) !== 'active') return '';
    const base = `/console/orgs/${orgId}/tokens/${token.id}`;
    const rotate = token.replacedBy
      ? html`<p class="muted">Rotated: its replacement is ${replacementOf(token.replacedBy)}.</p>`
      : html`<form class="row" method="post" action="${base}/rotate">${csrfField(csrf)}
<label>Old token keeps working <select name="overlapSeconds"><option value="">until revoked</option>
<option value="3600">1 more hour</option><option value="86400">1 more day</option><option value="604800">7 more days</option></select></label>
<button class="secondary" aria-label="Rotate token ${token.name}">Rotate</button></form>`;
    const ask = recentlyUsed(token, now) ? askFirst(revokeTokenQuestion(token, now)) : '';
    return html`${rotate}<form class="row" method="post" action="${base}/revoke"${ask}>${csrfField(csrf)}
${token.replacedBy ? html`<label class="check"><input type="checkbox" name="force" value="true"> even though its replacement has not served a successful request yet</label>` : ''}
<button class="danger" aria-label="Revoke token ${token.name}">Revoke</button></form>`;
  };
  return html`<p class="muted">Rotation gives a new token with the same name and scopes; the old one works on until revoked
(or for the overlap chosen). A rotated token cannot be revoked before its replacement has served a successful request,
so the IdP is never left without a working token, unless you say so. Revoking a token used in the last 24 hours asks
first.</p>
${dataTable(
  ['Name', 'Prefix', 'Scopes', 'State', 'Expires', 'Last used', { label: 'Actions', actions: true }],
  tokens.map((t) => [
    t.name,
    html`<code class="prefix">${t.prefix}…</code>`,
    t.scopes.join(', '),
    html`${badge(tokenState(t))}${t.expiresSoon ? html` ${badge('token_expiring')}` : ''}`,
    when(t.expiresAt),
    when(t.lastUsedAt),
    actions(t),
  ]),
)}`;
}

function schemasList(schemas: readonly SchemaView[]): Html {
  if (schemas.length === 0)
    return html`<p class="muted">None: this organization has the standard User, enterprise User and Group schemas.
Add one with <code>scimd schema put ORG FILE.json</code> or <code>PUT /admin/v1/orgs/{orgId}/schemas/{urn}</code>.</p>`;
  return html`<ul>${schemas.map((s) => {
    const attributes = (s.attributes as { name: string; type: string; multiValued: boolean }[]) ?? [];
    return html`<li><code>${s.id}</code> (${s.resourceType}): ${attributes.map(
      (a, i) =>
        html`${i > 0 ? ', ' : ''}<code>${a.name}</code> <span class="muted">${a.type}${a.multiValued ? ', multi-valued' : ''}</span>`,
    )}</li>`;
  })}</ul>`;
}

/** The failed requests with what to change: the operator's activity page and the setup link's panel. */
export function failuresList(failures: Health['recentFailures']): Html {
  if (failures.length === 0) return html`<p class="muted">No failed request.</p>`;
  return html`<ul class="failures">${failures.map(
    (
      f,
    ) => html`<li class="failure"><p>${when(f.at)} <code>${f.method} ${f.path}</code> → <strong>${f.status}</strong>
${f.scimType ? html`<code>${f.scimType}</code>` : ''}: ${withLongTokens(f.detail)}</p>
${f.hint ? html`<p class="hint"><strong>What to do:</strong> ${withLongTokens(f.hint)}</p>` : ''}</li>`,
  )}</ul>`;
}

interface EndpointView {
  readonly id: string;
  readonly orgId: string | null;
  readonly url: string;
  readonly events: readonly string[];
  readonly description: string;
  readonly state: string;
  readonly disabledReason: string | null;
}

export function webhooksPage(csrf: string, endpoints: readonly EndpointView[]): string {
  return page({
    title: 'Webhooks',
    nav: operatorNav(csrf),
    body: html`<h1>Webhook endpoints</h1>
<p class="lead">Create and change endpoints with <code>scimd webhook</code> or the admin API; here, see how their
deliveries go.</p>
${
  endpoints.length === 0
    ? html`<p class="muted">No endpoint.</p>`
    : dataTable(
        ['URL', 'State', 'Organization', 'Events'],
        endpoints.map((e) => [
          html`<a class="long" href="/console/webhooks/${e.id}">${e.url}</a>${e.description ? html`<br><span class="muted">${e.description}</span>` : ''}`,
          badge(e.state),
          e.orgId ? html`<a href="/console/orgs/${e.orgId}"><code>${e.orgId}</code></a>` : 'all',
          e.events.join(', '),
        ]),
      )
}`,
  });
}

export function webhookPage(
  csrf: string,
  endpoint: EndpointView & { pending: number },
  deliveries: readonly DeliveryView[],
  nextCursor: string | null,
): string {
  return page({
    title: 'Webhook deliveries',
    nav: operatorNav(csrf),
    body: html`<h1>Deliveries to <span class="long">${endpoint.url}</span></h1>
<p class="lead">${badge(endpoint.state)} ${endpoint.disabledReason ?? ''} · ${count(endpoint.pending, 'delivery', 'deliveries')} pending ·
<a href="/console/webhooks">All endpoints</a></p>
${
  deliveries.length === 0
    ? html`<p class="muted">No delivery yet.</p>`
    : dataTable(
        ['Change', 'Type', 'State', 'Attempts', 'Last status', 'Latency', 'Error', 'Next attempt'],
        deliveries.map((d) => [
          d.position,
          d.type,
          badge(d.state),
          d.attempts,
          d.lastStatus ?? '',
          d.lastLatencyMs === null ? '' : `${d.lastLatencyMs} ms`,
          d.lastError ? withLongTokens(d.lastError) : '',
          d.nextAttemptAt ? when(d.nextAttemptAt) : '',
        ]),
      )
}
<div class="pager">${nextCursor ? html`<a href="/console/webhooks/${endpoint.id}?before=${nextCursor}">Older deliveries</a>` : ''}</div>`,
  });
}
