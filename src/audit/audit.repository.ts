// SQL for the audit log: the only module that builds queries on audit_events.
import { type Kysely, type QueryCreator, sql } from 'kysely';
import { param, StatementCache, statement, type Values } from '../db/statement.js';
import type { DB } from '../db/tables.js';
import { storableText } from '../db/text.js';
import { batchRows } from '../db/write-batches.js';
import type { AuditEntry, AuditEvent, AuditQuery, AuditSubject } from './audit.js';

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

/** An entry's fields in a batch's row, in the order of AUDIT_TABLE_COLUMNS. */
const AUDIT_FIELDS = [
  'audit_org',
  'audit_at',
  'audit_actor',
  'audit_action',
  'audit_resource_type',
  'audit_resource_id',
  'audit_status',
  'audit_request_id',
] as const;
type AuditBatchRow = Record<(typeof AUDIT_FIELDS)[number] | 'n', unknown>;

/**
 * The columns of an entry in a batch's rows (db/write-batches.ts batchRows): the fields auditValues
 * gives, on each write of the batch that has an entry.
 */
export const AUDIT_BATCH_COLUMNS =
  'audit_org uuid, audit_at timestamptz, audit_actor text, audit_action text, audit_resource_type text, audit_resource_id text, audit_status integer, audit_request_id text';

/**
 * A CTE step writing the entries of the writes of a batch (the step `batch`, with AUDIT_BATCH_COLUMNS
 * and `n`, each write's place) that the step `written` wrote: those whose `key` (a column of both) it
 * returned, in the batch's order.
 */
export function auditBatchWritten(key: string) {
  // biome-ignore lint/suspicious/noExplicitAny: the creator of any statement with `batch` and `written` steps.
  return (w: QueryCreator<any>) =>
    w
      .insertInto('audit_events')
      .columns(AUDIT_TABLE_COLUMNS)
      .expression(
        w
          .selectFrom('batch')
          .select(AUDIT_FIELDS)
          .where('audit_org', 'is not', null)
          .where(sql.ref(`batch.${key}`), 'in', w.selectFrom('written').select(key))
          .orderBy('n'),
      );
}

/** The fields of an entry as a batch's row carries them, its texts made storable (a decoded path can carry a NUL). */
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

/** Any number of entries in one statement, in the order given. */
const insertEntries = statement((db) =>
  db
    .insertInto('audit_events')
    .columns(AUDIT_TABLE_COLUMNS)
    .expression(
      db
        .selectFrom(batchRows<AuditBatchRow>(`n integer, ${AUDIT_BATCH_COLUMNS}`))
        .select(AUDIT_FIELDS)
        .orderBy('n'),
    ),
);

export async function insertAudit(
  db: Kysely<DB>,
  entries: readonly { readonly entry: AuditEntry; readonly at: Date }[],
): Promise<void> {
  const batch = entries.map(({ entry, at }, n) => ({ n, ...auditValues(entry, at) }));
  await insertAuditBatch(db, JSON.stringify(batch));
}

/** The entries of a batch (db/write-batches.ts: rows of auditValues, each with its place `n`), in order. */
export async function insertAuditBatch(db: Kysely<DB>, batch: string): Promise<void> {
  await insertEntries.run(db, { batch });
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

/** `= any(…)` of an array parameter of ids. */
const anyOf = (name: string) => sql<string>`any(${param(name)}::uuid[])`;

/** The organization's tokens and setup links among some ids: what names them in the audit log. */
const subjectsStatement = statement((db) =>
  db
    .selectFrom('scim_tokens')
    .select([sql<AuditSubject['kind']>`'token'`.as('kind'), sql<string>`id::text`.as('id'), 'name', 'prefix'])
    .where('org_id', '=', param('org'))
    .where('id', '=', anyOf('ids'))
    .unionAll(
      db
        .selectFrom('setup_links')
        .select([
          sql<AuditSubject['kind']>`'setup_link'`.as('kind'),
          sql<string>`id::text`.as('id'),
          'note as name',
          'prefix',
        ])
        .where('org_id', '=', param('org'))
        .where('id', '=', anyOf('ids')),
    ),
);

/** The tokens and setup links of the organization with these ids (UUIDs), by id; a deleted one is missing. */
export async function auditSubjects(
  db: Kysely<DB>,
  orgId: string,
  ids: readonly string[],
): Promise<Map<string, AuditSubject>> {
  if (ids.length === 0) return new Map();
  const { rows } = await subjectsStatement.run(db, { org: orgId, ids });
  return new Map(rows.map(({ id, kind, name, prefix }) => [id, { kind, name, prefix }]));
}
