// What the console asks before an operator revokes something an identity provider or an IT admin may
// still be using: a token used in the last day, or a setup link. A Revoke form carries the question
// in data-confirm attributes, which the script asks in a dialog; without the script the server
// answers the form with a page asking the same, whose button sends it again with `confirm`.
import type { OrgView } from '../../orgs/orgs.service.js';
import type { SetupLinkView } from '../../orgs/setup-links.service.js';
import type { renderToken } from '../../orgs/tokens.service.js';
import { type Html, html } from '../html.js';
import { csrfField, page, readable, when } from './layout.js';
import { ago } from './words.js';

type TokenView = ReturnType<typeof renderToken>;

/** A token used this recently is probably still in an IdP: revoking it asks first. */
const RECENT_USE_MS = 24 * 3_600_000;

export function recentlyUsed(token: Pick<TokenView, 'lastUsedAt'>, now: Date): boolean {
  return token.lastUsedAt !== null && now.getTime() - new Date(token.lastUsedAt).getTime() < RECENT_USE_MS;
}

/** What is asked, and what it means; the button that answers yes. */
export interface Question {
  readonly question: string;
  /** The value the question names (a link's first characters), shown as code on the page. */
  readonly value?: string;
  readonly detail: string;
  readonly button: string;
}

export function revokeTokenQuestion(token: TokenView, now: Date): Question {
  const used = token.lastUsedAt
    ? `It was last used ${ago(token.lastUsedAt, now)} (${readable(token.lastUsedAt)}), so an identity provider is probably still using it.`
    : 'It has never been used.';
  return {
    question: `Revoke the token “${token.name}”?`,
    detail: `${used} Its requests are refused from then on, and provisioning with it stops until the identity provider has another token.`,
    button: 'Revoke token',
  };
}

export function revokeLinkQuestion(link: SetupLinkView, now: Date): Question {
  const opened = link.lastOpenedAt
    ? `It was last opened ${ago(link.lastOpenedAt, now)} (${readable(link.lastOpenedAt)}).`
    : 'It has not been opened yet.';
  return {
    question: `Revoke the setup link ${link.prefix}…${link.note ? ` (${link.note})` : ''}?`,
    value: `${link.prefix}…`,
    detail: `${opened} It stops opening at once, and pages opened from it stop working. Tokens created through it keep working.`,
    button: 'Revoke setup link',
  };
}

/** The attributes of a form that asks `question` first (console.js). */
export function askFirst(question: Question): Html {
  return html` data-confirm="${question.question}" data-confirm-detail="${question.detail}" data-confirm-button="${question.button}"`;
}

interface ConfirmPageData {
  readonly csrf: string;
  /** The operator's navigation (views/operator.ts, which shows these questions in its forms). */
  readonly nav: Html;
  readonly org: OrgView;
  readonly question: Question;
  /** What is revoked, as facts to check before answering. */
  readonly facts: readonly [term: string, value: unknown][];
  /** Where the form goes again, with `confirm`. */
  readonly action: string;
  /** Further fields of the form (the guard's `force`). */
  readonly fields?: Html;
  readonly back: string;
}

/** The question, its value as code: a random value may be wider than a phone's heading line. */
function heading({ question, value }: Question): Html | string {
  const at = value ? question.indexOf(value) : -1;
  if (!value || at < 0) return question;
  return html`${question.slice(0, at)}<code>${value}</code>${question.slice(at + value.length)}`;
}

function confirmPage(data: ConfirmPageData): string {
  const { question } = data;
  return page({
    title: question.question,
    nav: data.nav,
    body: html`<h1>${heading(question)}</h1>
<p class="lead">${data.org.name}</p>
<dl class="facts">${data.facts.map(([term, value]) => html`<dt>${term}</dt><dd>${value}</dd>`)}</dl>
<p>${question.detail}</p>
<form class="stack" method="post" action="${data.action}">${csrfField(data.csrf)}
<input type="hidden" name="confirm" value="true">
${data.fields ?? ''}
<div class="buttons"><button class="danger">${question.button}</button> <a class="button secondary" href="${data.back}">Cancel</a></div>
</form>`,
  });
}

export function confirmRevokeTokenPage(data: {
  csrf: string;
  nav: Html;
  org: OrgView;
  token: TokenView;
  force: boolean;
  now: Date;
}): string {
  const { token, org } = data;
  return confirmPage({
    csrf: data.csrf,
    nav: data.nav,
    org,
    question: revokeTokenQuestion(token, data.now),
    facts: [
      ['Name', token.name],
      ['Prefix', html`<code class="prefix">${token.prefix}…</code>`],
      ['Scopes', token.scopes.join(', ')],
      ['Last used', when(token.lastUsedAt)],
      ['Last success', when(token.lastSuccessAt)],
      ['Created', when(token.createdAt)],
    ],
    action: `/console/orgs/${org.id}/tokens/${token.id}/revoke`,
    fields: token.replacedBy
      ? html`<label class="check"><input type="checkbox" name="force" value="true"${data.force ? html` checked` : ''}> even though its replacement has not served a successful request yet</label>`
      : undefined,
    back: `/console/orgs/${org.id}#tokens`,
  });
}

export function confirmRevokeLinkPage(data: {
  csrf: string;
  nav: Html;
  org: OrgView;
  link: SetupLinkView;
  now: Date;
}): string {
  const { link, org } = data;
  return confirmPage({
    csrf: data.csrf,
    nav: data.nav,
    org,
    question: revokeLinkQuestion(link, data.now),
    facts: [
      ['Link', html`<code class="prefix">${link.prefix}…</code>`],
      ['Note', link.note || html`<span class="muted">none</span>`],
      ['Last opened', when(link.lastOpenedAt)],
      ['Expires', when(link.expiresAt)],
    ],
    action: `/console/orgs/${org.id}/setup-links/${link.id}/revoke`,
    back: `/console/orgs/${org.id}#setup-links`,
  });
}
