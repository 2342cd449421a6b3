// SQL for the audit log: the only module that builds queries on audit_events.
import { type Kysely, type QueryCreator, sql } from 'kysely';
import { param, StatementCache, statement, type Values } from '../db/statement.js';
import type { DB } from '../db/tables.js';
import { storableText } from '../db/text.js';
import type { AuditEntry, AuditEvent, AuditQuery } from './audit.js';

/**
 * One entry's columns as parameters named `audit_*`, for a statement that writes the entry together
 * with its change (the audited create of a user); auditValues gives their values.
 */
export const AUDIT_COLUMNS = {
  org_id: param('audit_org'),
  at: param<Date>('audit_at'),
  actor: param('audit_actor'),
  action: param('audit_action'),
  resource_type: param<string | null>('audit_resource_type'),
  resource_id: param<string | null>('audit_resource_id'),
  status: param<number>('audit_status'),
  request_id: param<string | null>('audit_request_id'),
};

/**
 * A CTE step writing the entry of AUDIT_COLUMNS' parameters if the step named `written` wrote a row
 * (one at most: the step writes by primary key):
 * for a write that is one statement and may find nothing to write (that failure is recorded after
 * its answer).
 */
export function auditWritten() {
  const typed = (name: string, type: string) => sql`${param(name)}::${sql.raw(type)}`;
  // biome-ignore lint/suspicious/noExplicitAny: the creator of any statement with a `written` step.
  return (w: QueryCreator<any>) =>
    w
      .insertInto('audit_events')
      .columns(['org_id', 'at', 'actor', 'action', 'resource_type', 'resource_id', 'status', 'request_id'])
      .expression(
        w
          .selectFrom('written')
          .select([
            typed('audit_org', 'uuid').as('org_id'),
            typed('audit_at', 'timestamptz').as('at'),
            typed('audit_actor', 'text').as('actor'),
            typed('audit_action', 'text').as('action'),
            typed('audit_resource_type', 'text').as('resource_type'),
            typed('audit_resource_id', 'text').as('resource_id'),
            typed('audit_status', 'integer').as('status'),
            typed('audit_request_id', 'text').as('request_id'),
          ]),
      );
}

/** The values of AUDIT_COLUMNS for an entry, its texts made storable (a decoded path can carry a NUL). */
export function auditValues(entry: AuditEntry, at: Date): Values {
  return {
    audit_org: entry.orgId,
    audit_at: at,
    audit_actor: entry.actor,
    audit_action: entry.action,
    audit_resource_type: entry.resourceType ?? null,
    audit_resource_id: entry.resourceId === undefined ? null : storableText(entry.resourceId.slice(0, 200)),
    audit_status: entry.status,
    audit_request_id: entry.requestId ?? null,
  };
}

const AUDIT_TABLE_COLUMNS = [
  'org_id',
  'at',
  'actor',
  'action',
  'resource_type',
  'resource_id',
  'status',
  'request_id',
] as const;

/**
 * Entries as rows, from one array parameter per column (their names after `prefix`), in the order
 * given: for `insert into audit_events`, alone or as a step of a statement that writes more.
 */
export function auditRows(prefix = '') {
  const array = (name: string, type: string) => sql`${param(`${prefix}${name}`)}::${sql.raw(type)}[]`;
  return sql`select org_id, at, actor, action, resource_type, resource_id, status, request_id
    from unnest(${array('orgs', 'uuid')}, ${array('ats', 'timestamptz')}, ${array('actors', 'text')},
      ${array('actions', 'text')}, ${array('types', 'text')}, ${array('ids', 'text')},
      ${array('statuses', 'integer')}, ${array('requests', 'text')})
      with ordinality as e(org_id, at, actor, action, resource_type, resource_id, status, request_id, n)
    order by n`;
}

/** The values of auditRows' parameters for these entries. */
export function auditArrays(
  entries: readonly { readonly entry: AuditEntry; readonly at: Date }[],
  prefix = '',
): Values {
  const rows = entries.map(({ entry, at }) => auditValues(entry, at));
  const column = (name: string) => rows.map((r) => r[name]);
  return {
    [`${prefix}orgs`]: column('audit_org'),
    [`${prefix}ats`]: column('audit_at'),
    [`${prefix}actors`]: column('audit_actor'),
    [`${prefix}actions`]: column('audit_action'),
    [`${prefix}types`]: column('audit_resource_type'),
    [`${prefix}ids`]: column('audit_resource_id'),
    [`${prefix}statuses`]: column('audit_status'),
    [`${prefix}requests`]: column('audit_request_id'),
  };
}

/** Any number of entries in one statement. */
const insertEntries = statement((db) =>
  db.insertInto('audit_events').columns(AUDIT_TABLE_COLUMNS).expression(auditRows()),
);

export async function insertAudit(
  db: Kysely<DB>,
  entries: readonly { readonly entry: AuditEntry; readonly at: Date }[],
): Promise<void> {
  await insertEntries.run(db, auditArrays(entries));
}

const listings = new StatementCache();

/** Newest first; `nextBefore` continues the listing when there is more. */
export async function listAudit(
  db: Kysely<DB>,
  orgId: string,
  query: AuditQuery,
): Promise<{ events: AuditEvent[]; nextBefore: string | undefined }> {
  // One statement per combination of the conditions given (each can use the index).
  const given = { before: query.before, resource: query.resourceId, since: query.since, until: query.until };
  const key = Object.entries(given)
    .filter(([, v]) => v !== undefined)
    .map(([k]) => k)
    .join(' ');
  const listing = listings.get(key, (b) => {
    let q = b.selectFrom('audit_events').selectAll().where('org_id', '=', param('org'));
    if (given.before !== undefined) q = q.where('id', '<', param('before'));
    if (given.resource !== undefined) q = q.where('resource_id', '=', param('resource'));
    if (given.since !== undefined) q = q.where('at', '>=', param<Date>('since'));
    if (given.until !== undefined) q = q.where('at', '<', param<Date>('until'));
    return q.orderBy('id', 'desc').limit(param<number>('limit'));
  });
  const { rows } = await listing.run(db, { org: orgId, ...given, limit: query.limit + 1 });
  const page = rows.slice(0, query.limit);
  return {
    events: page.map((r) => ({
      id: String(r.id),
      at: r.at.toISOString(),
      actor: r.actor,
      action: r.action,
      resourceType: r.resource_type,
      resourceId: r.resource_id,
      status: r.status,
      requestId: r.request_id,
    })),
    nextBefore: rows.length > query.limit ? String(page[page.length - 1]!.id) : undefined,
  };
}
