// What every console page shares: the document, the navigation, and small pieces (dates, badges, a
// secret shown once, the CSRF field).
import { type Html, html } from '../html.js';

/** Whose name a page carries: scimd's on the operator's pages, the operator's brand on a customer's. */
export interface Masthead {
  /** In the header and after each title. */
  readonly name: string;
  /** Where the name leads; plain text without. */
  readonly home?: string;
  /** An image of the name under /console/assets/, shown instead of it (the name is its alt text). */
  readonly logo?: string;
  /** The tab's icon under /console/assets/. */
  readonly icon: { readonly href: string; readonly type: string };
  /** A class of the body for the pages of one audience. */
  readonly audience?: 'setup';
}

/** The operator's pages: scimd's name, and the brand's logo beside it when brand.css gives one. */
const OPERATOR: Masthead = {
  name: 'scimd',
  home: '/console',
  icon: { href: '/console/assets/icon.svg', type: 'image/svg+xml' },
};

export interface PageOptions {
  readonly title: string;
  /** The navigation's links and the sign-out form; nothing on the sign-in page. */
  readonly nav?: Html;
  readonly body: Html;
  /** The operator's unless given. */
  readonly masthead?: Masthead;
}

function mastheadOf({ name, home, logo }: Masthead): Html {
  const mark = logo
    ? html`<img class="brand-logo" src="${logo}" alt="${name}">`
    : html`<span class="logo" aria-hidden="true"></span>${name}`;
  return home ? html`<a class="brand" href="${home}">${mark}</a>` : html`<span class="brand">${mark}</span>`;
}

export function page({ title, nav, body, masthead = OPERATOR }: PageOptions): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · ${masthead.name}</title>
<link rel="icon" href="${masthead.icon.href}" type="${masthead.icon.type}">
<link rel="stylesheet" href="/console/assets/console.css">
<link rel="stylesheet" href="/console/assets/brand.css">
<script src="/console/assets/console.js" defer></script>
</head>
<body${masthead.audience ? html` class="${masthead.audience}"` : ''}>
<header class="top">${mastheadOf(masthead)}${nav ?? ''}</header>
<main id="main">
${body}
</main>
</body>
</html>
`.text;
}

export const csrfField = (csrf: string) => html`<input type="hidden" name="_csrf" value="${csrf}">`;

/** An instant as the pages show it: 2026-11-29 11:33 UTC. */
export const readable = (iso: string) => `${iso.slice(0, 16).replace('T', ' ')} UTC`;

/** A date as people read it, with the exact time for machines; "never" when there is none. */
export function when(at: string | Date | null | undefined): Html {
  if (!at) return html`<span class="muted">never</span>`;
  const iso = typeof at === 'string' ? at : at.toISOString();
  return html`<time datetime="${iso}">${readable(iso)}</time>`;
}

const STATES: Record<string, [label: string, tone: string]> = {
  healthy: ['Healthy', 'ok'],
  never_connected: ['Never connected', 'none'],
  idle: ['Idle', 'warn'],
  token_expiring: ['Token expiring', 'warn'],
  failing: ['Failing', 'bad'],
  credential_trouble: ['Credential trouble', 'bad'],
  active: ['Active', 'ok'],
  inactive: ['Inactive', 'none'],
  disabled: ['Disabled', 'bad'],
  expired: ['Expired', 'none'],
  revoked: ['Revoked', 'none'],
  delivered: ['Delivered', 'ok'],
  pending: ['Pending', 'warn'],
};

export function badge(state: string): Html {
  const [label, tone] = STATES[state] ?? [state, 'none'];
  return html`<span class="badge ${tone}">${label}</span>`;
}

/** A value to copy into another screen, with a copy button once the script runs. */
export function copyable(id: string, value: string): Html {
  return html`<code class="value" id="${id}">${value}</code>
<button type="button" class="secondary" data-copy="${id}" hidden>Copy</button>`;
}

/** A secret shown once: after this page it cannot be read again. */
export function revealed(label: string, value: string, after: string): Html {
  return html`<div class="notice ok" role="status">
<p><strong>${label}</strong>: shown this once. Copy it now; scimd keeps only its hash.</p>
<div class="secret">${copyable('revealed-secret', value)}</div>
<p class="muted">${after}</p>
</div>`;
}

export function notice(tone: 'ok' | 'warn' | 'bad', text: string): Html {
  return html`<div class="notice ${tone}" role="${tone === 'bad' ? 'alert' : 'status'}">${text}</div>`;
}

export function errorPage(
  status: number,
  message: string,
  back: string,
  nav?: Html,
  masthead?: Masthead,
): string {
  return page({
    title: status >= 500 ? 'Unavailable' : 'Not done',
    ...(nav ? { nav } : {}),
    ...(masthead ? { masthead } : {}),
    body: html`<h1>${status >= 500 ? 'Something is unavailable' : 'That did not work'}</h1>
${notice('bad', message)}
<p><a href="${back}">Back</a></p>`,
  });
}
