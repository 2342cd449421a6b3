// An organization's activity, for its operator: the failed requests with what to change, the audit
// log (filtered by resource and time, by page) with its tokens and setup links named, and the
// latest changes.
import type { AuditEvent, AuditSubject } from '../../audit/audit.js';
import type { OrgHealth as Health } from '../../health/sync-health.service.js';
import type { OrgView } from '../../orgs/orgs.service.js';
import { type Html, html } from '../html.js';
import { page, when } from './layout.js';
import { failuresList, operatorNav } from './operator.js';
import { dataTable } from './table.js';

interface ChangeRow {
  readonly position: string;
  readonly type: string;
  readonly resourceId: string;
  readonly occurredAt: Date;
}

export interface ActivityPageData {
  readonly csrf: string;
  readonly org: OrgView;
  readonly failures: Health['recentFailures'];
  readonly events: readonly AuditEvent[];
  /** The tokens and setup links the events name, by id (audit-events.service.ts subjectsOf). */
  readonly subjects: ReadonlyMap<string, AuditSubject>;
  readonly nextCursor: string | null;
  readonly filter: { resourceId: string; since: string; until: string };
  readonly changes: readonly ChangeRow[];
}

export function activityPage(data: ActivityPageData): string {
  const { org, filter } = data;
  const base = `/console/orgs/${org.id}/activity`;
  const filterQuery = new URLSearchParams(Object.entries(filter).filter(([, v]) => v !== '')).toString();
  const next = data.nextCursor
    ? html`<a href="${base}?${filterQuery ? `${filterQuery}&` : ''}cursor=${data.nextCursor}">Older entries</a>`
    : '';
  const names = new Names(org.id, data.subjects);
  return page({
    title: `${org.name}: activity`,
    nav: operatorNav(data.csrf),
    body: html`<h1>${org.name}: activity</h1>
<p class="lead"><a href="/console/orgs/${org.id}">Back to the organization</a></p>
<h2>Failed requests</h2>
${failuresList(data.failures)}
<h2 id="audit">Audit log</h2>
<form class="row" method="get" action="${base}">
<label>Resource id <input name="resourceId" value="${filter.resourceId}"></label>
<label>Since <input type="datetime-local" name="since" value="${filter.since}"></label>
<label>Until <input type="datetime-local" name="until" value="${filter.until}"></label>
<button class="secondary">Filter</button>
</form>
${
  data.events.length === 0
    ? html`<p class="muted">No entry.</p>`
    : dataTable(
        ['At', 'Who', 'Action', 'Resource', 'Status', 'Request'],
        data.events.map((e) => [
          when(e.at),
          names.actor(e.actor),
          e.action,
          e.resourceId
            ? html`<a href="${base}?resourceId=${encodeURIComponent(e.resourceId)}#audit">${names.resource(e.resourceType, e.resourceId)}</a>`
            : '',
          e.status,
          e.requestId ? html`<code>${e.requestId}</code>` : '',
        ]),
      )
}
<div class="pager">${next}</div>
<h2 id="changes">Latest changes</h2>
${
  data.changes.length === 0
    ? html`<p class="muted">No change in the feed yet.</p>`
    : dataTable(
        ['Position', 'At', 'Type', 'Resource'],
        data.changes.map((c) => [c.position, when(c.occurredAt), c.type, html`<code>${c.resourceId}</code>`]),
      )
}`,
  });
}

/** Who and what an audit entry names, in words: tokens and setup links by name, not by id. */
class Names {
  constructor(
    private readonly orgId: string,
    private readonly subjects: ReadonlyMap<string, AuditSubject>,
  ) {}

  /** `admin`, `console:<session>`, `token:<id>`, `setup_link:<id>` (sessions/sessions.ts, audit.ts). */
  actor(actor: string): Html {
    if (actor === 'admin') return html`the admin API`;
    const colon = actor.indexOf(':');
    const kind = actor.slice(0, colon);
    const id = actor.slice(colon + 1);
    if (kind === 'console') return html`an operator, in the console`;
    if (kind === 'token') return this.#subject('token', id);
    if (kind === 'setup_link') return html`an IT admin, with ${this.#subject('setup_link', id)}`;
    return html`<code>${actor}</code>`;
  }

  resource(type: string | null, id: string): Html {
    switch (type) {
      case 'Token':
        return this.#subject('token', id);
      case 'SetupLink':
        return this.#subject('setup_link', id);
      case 'Org':
        return id === this.orgId ? html`this organization` : html`organization <code>${id}</code>`;
      default:
        return html`${type ? `${type.toLowerCase()} ` : ''}<code>${id}</code>`;
    }
  }

  /** A token by its name, a setup link by its note or prefix; one deleted since by its id's start. */
  #subject(kind: AuditSubject['kind'], id: string): Html {
    const subject = this.subjects.get(id.toLowerCase());
    if (!subject || subject.kind !== kind) {
      const what = kind === 'token' ? 'a deleted token' : 'a deleted setup link';
      return html`<span class="muted">${what}</span> <code>${id.slice(0, 8)}…</code>`;
    }
    if (kind === 'token') return html`token “${subject.name}”`;
    return subject.name
      ? html`setup link “${subject.name}”`
      : html`setup link <code class="prefix">${subject.prefix}…</code>`;
  }
}
