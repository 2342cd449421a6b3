// The pages a customer's IT admin sees after opening a setup link: choose Okta or Entra, follow its
// numbered steps with the organization's values filled in, and watch the connection come alive in a
// panel kept in view beside them. They carry the operator's brand, or a neutral name, never scimd's,
// and lead nowhere but to each other.
import type { OrgHealth as Health } from '../../health/sync-health.service.js';
import type { Arrivals } from '../../resources/arrivals.repository.js';
import type { Brand } from '../brand.js';
import { type Html, html } from '../html.js';
import { type GuideValue, IDPS, type IdpGuide, type IdpName } from '../idp-guides.js';
import { copyable, csrfField, type Masthead, page, when } from './layout.js';
import { failuresList } from './operator.js';
import { dataTable } from './table.js';
import { ago, count } from './words.js';

const IDP_TITLES: Record<IdpName, string> = { okta: 'Okta', entra: 'Microsoft Entra ID' };

/** The name customers' pages carry when the operator set none: what the pages are for. */
const NEUTRAL_NAME = 'Directory sync';

/** The setup link's pages and the link itself: a customer's, not the operator's. */
export const isSetupPath = (path: string) => /^\/console\/(setup|link)(\/|$)/.test(path);

/** The operator's brand on a customer's page; its name leads to the setup pages once a link is open. */
export function setupMasthead(brand: Brand, signedIn: boolean): Masthead {
  const logo = brand.logo && `/console/assets/${brand.logo.file}`;
  return {
    name: brand.name ?? NEUTRAL_NAME,
    ...(signedIn ? { home: '/console/setup' } : {}),
    ...(logo ? { logo } : {}),
    icon: brand.logo
      ? { href: logo!, type: brand.logo.type }
      : { href: '/console/assets/directory.svg', type: 'image/svg+xml' },
    audience: 'setup',
  };
}

/** Schema URNs and URLs in a guide's sentence as code: on a phone they may break anywhere, words may not. */
function prose(text: string): Html {
  return html`${text
    .split(/((?:urn:|https?:\/\/)[^\s,;()]*[^\s,;().])/)
    .map((part, i) => (i % 2 === 1 ? html`<code>${part}</code>` : part))}`;
}

/** The setup pages: the connection, and the mapping of groups to roles while the catalogue has roles. */
export function setupNav(orgName: string, mapRoles: boolean): Html {
  return html`<nav aria-label="Setup"><a href="/console/setup">Connect ${orgName}’s identity provider</a>${
    mapRoles ? html`<a href="/console/setup/roles">Map groups to roles</a>` : ''
  }</nav>`;
}

/** After the connection: the step that maps the customer's groups to the product's roles. */
function rolesStep(): Html {
  return html`<h2>Map your groups to roles</h2>
<p>Once your groups arrive, or before, choose which role the people in each group get, and the role of everyone
else. <a href="/console/setup/roles">Map your groups to roles</a></p>`;
}

export function linkGonePage(brand: Brand): string {
  return page({
    title: 'Link not valid',
    masthead: setupMasthead(brand, false),
    body: html`<h1>This setup link does not work</h1>
<p>It has expired, was revoked, or was copied incompletely. Ask whoever sent it for a new one.</p>`,
  });
}

/**
 * What a setup link opens on: one button, so that only a person, not a link preview, uses it. The form
 * posts back to the address it was opened at (no action), so the link's secret is written nowhere.
 */
export function linkPage(brand: Brand, orgName: string): string {
  return page({
    title: 'Connect your identity provider',
    masthead: setupMasthead(brand, false),
    body: html`<h1>Connect ${orgName} to your identity provider</h1>
<p class="lead">This link lets you connect Okta or Microsoft Entra ID to ${orgName}’s account, step by step, and
create the token your identity provider needs.</p>
<form method="post"><button>Continue</button></form>`,
  });
}

/** What the connection panel shows, read at each refresh. */
export interface Connection {
  readonly health: Health;
  /** The newest users and groups, read once a request has succeeded. */
  readonly arrivals: Arrivals | undefined;
  readonly groupSync: boolean;
  readonly now: Date;
}

/** Where the connection's state is shown, and refreshed every few seconds while the page is open. */
function connectionPanel(connection: Connection): Html {
  return html`<section id="connection" aria-live="polite" data-refresh="/console/setup/status" data-every="2000">
${statusFragment(connection)}
</section>`;
}

/** The inside of the connection panel: also served alone, for the page's script to refresh it. */
export function statusFragment({ health, arrivals, groupSync, now }: Connection): Html {
  const connected = health.lastSuccessAt !== null;
  const trouble =
    health.state === 'failing' ||
    health.state === 'credential_trouble' ||
    (!connected && health.lastRequestAt);
  const tone = trouble ? 'trouble' : connected ? 'connected' : 'waiting';
  const headline = trouble
    ? connected
      ? 'Connected, but recent requests fail'
      : 'Requests arrive, but none has succeeded yet'
    : connected
      ? 'Connected'
      : 'Waiting for your identity provider’s first request…';
  return html`<div class="status ${tone}" data-state="${tone}"><span class="dot" aria-hidden="true"></span>
<div><strong>${headline}</strong><br><span class="muted">${health.reasons.join(' ')}${
    connected ? html` Last successful request: ${when(health.lastSuccessAt)}.` : ''
  }</span></div></div>
${arrivals ? arrived(arrivals, groupSync, now) : ''}
${health.lastRequestAt ? html`<h3>Failed requests</h3>${failuresList(health.recentFailures)}` : ''}`;
}

/** The users and groups received so far, the newest first. */
function arrived({ totals, users, groups }: Arrivals, groupSync: boolean, now: Date): Html {
  const received = groupSync
    ? `${count(totals.users, 'user')} and ${count(totals.groups, 'group')} received so far.`
    : `${count(totals.users, 'user')} received so far.`;
  const at = (date: Date) => html`<time datetime="${date.toISOString()}">${ago(date, now)}</time>`;
  const newest = (shown: number, total: number, noun: string) =>
    total > shown ? html`<p class="muted">The newest ${shown} of ${count(total, noun)}.</p>` : '';
  return html`<p class="received">${received}</p>
<h3>Users</h3>
${
  users.length === 0
    ? html`<p class="muted">None yet: assign people to the app in your identity provider.</p>`
    : html`${newest(users.length, totals.users, 'user')}<ul class="arrivals">${users.map(
        (u) =>
          html`<li><span class="who">${u.displayName ?? u.userName}</span>${
            u.displayName ? html` <code>${u.userName}</code>` : ''
          }${u.active ? '' : html` <span class="badge none">Inactive</span>`} <span class="muted">${at(u.at)}</span></li>`,
      )}</ul>`
}
${
  groupSync
    ? html`<h3>Groups</h3>
${
  groups.length === 0
    ? html`<p class="muted">None yet: push or assign groups in your identity provider.</p>`
    : html`${newest(groups.length, totals.groups, 'group')}<ul class="arrivals">${groups.map(
        (g) =>
          html`<li><span class="who">${g.displayName}</span> <span class="muted">${at(g.at)}</span></li>`,
      )}</ul>`
}`
    : ''
}`;
}

export function setupHomePage(
  brand: Brand,
  orgName: string,
  connection: Connection,
  mapRoles = false,
): string {
  return page({
    title: 'Connect your identity provider',
    masthead: setupMasthead(brand, true),
    nav: setupNav(orgName, mapRoles),
    body: html`<h1>Connect ${orgName} to your identity provider</h1>
<p class="lead">Users and groups you assign in your identity provider will be provisioned over SCIM 2.0.
Choose yours: the steps that follow have this organization’s values filled in.</p>
<div class="choices">${IDPS.map(
      (idp) => html`<a class="choice" href="/console/setup/${idp}">${IDP_TITLES[idp]}</a>`,
    )}</div>
<h2>Connection</h2>
${connectionPanel(connection)}
${mapRoles ? rolesStep() : ''}`,
  });
}

export interface GuidePageData {
  readonly brand: Brand;
  readonly orgName: string;
  readonly csrf: string;
  readonly guide: IdpGuide;
  readonly connection: Connection;
  /** A token generated by the last action, shown once. */
  readonly token?: string;
  /** The organization's catalogue has roles: the step that maps groups to them follows the guide. */
  readonly mapRoles?: boolean;
}

/**
 * The IdP's steps, numbered, with the connection panel beside them on a wide screen and above them on
 * a narrow one, kept in view (sticky) while the IT admin works through them.
 */
export function guidePage(data: GuidePageData): string {
  const { guide } = data;
  let copies = 0;
  const value = (v: GuideValue) => {
    copies += 1;
    if (!('token' in v)) return html`<dt>${v.label}</dt><dd>${copyable(`value-${copies}`, v.value)}</dd>`;
    if (data.token)
      return html`<dt>${v.label}</dt><dd>${copyable('revealed-secret', data.token)}
<span class="muted">Shown this once: paste it now. If you lose it, generate another.</span></dd>`;
    return html`<dt>${v.label}</dt><dd><form class="inline" method="post" action="/console/setup/${guide.idp}/token">${csrfField(data.csrf)}
<button>Generate a token</button></form><span class="muted">It is shown once, when you generate it.</span></dd>`;
  };
  const steps = (list: IdpGuide['steps']) =>
    html`<ol class="steps">${list.map(
      (step) => html`<li><h3>${step.title}</h3>${step.text.map((t) => html`<p>${prose(t)}</p>`)}
${step.values?.length ? html`<dl>${step.values.map(value)}</dl>` : ''}</li>`,
    )}</ol>`;
  const roles = guide.roles;
  return page({
    title: `Connect ${guide.title}`,
    masthead: setupMasthead(data.brand, true),
    nav: setupNav(data.orgName, data.mapRoles ?? false),
    body: html`<h1>Connect ${guide.title}</h1>
<p class="lead">Follow these steps in ${guide.title}; the connection panel shows what arrives as you go.
<a href="/console/setup">Choose another identity provider</a></p>
<div class="guide">
<aside class="connection" aria-labelledby="connection-heading" tabindex="0">
<h2 class="panel-title" id="connection-heading">Connection</h2>
${connectionPanel(data.connection)}
</aside>
<div class="guide-steps">
<h2>Steps</h2>
${steps(guide.steps)}
<h2>Unique identifier</h2>
<p><code>${guide.uniqueIdentifier.idpAttribute}</code> → <code>${guide.uniqueIdentifier.scimAttribute}</code>.
${prose(guide.uniqueIdentifier.note)}</p>
<h2>Attribute mappings</h2>
${dataTable(
  [`${guide.title} attribute`, 'SCIM attribute', 'What to do'],
  guide.mappings.map((m) => [
    html`<code>${m.idpAttribute}</code>`,
    html`<code>${m.scimAttribute}</code>`,
    m.note ? prose(m.note) : html`<span class="muted">Mapped by default.</span>`,
  ]),
)}
<h2>Groups</h2>
${guide.groups.map((t) => html`<p>${prose(t)}</p>`)}
${
  roles
    ? html`<h2>${roles.title}</h2>
${steps(roles.steps)}
${
  roles.settings
    ? dataTable(
        ['Setting', ...roles.settings.columns],
        roles.settings.rows.map(([setting, ...values]) => [
          setting,
          ...values.map((v) => html`<code>${v}</code>`),
        ]),
      )
    : ''
}`
    : ''
}
${data.mapRoles ? rolesStep() : ''}
</div>
</div>`,
  });
}
