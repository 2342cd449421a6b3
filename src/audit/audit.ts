// The organization's audit log: who (a token or the admin) did what to which resource, with what
// outcome, under which request id. Never a secret and never an attribute value.
import type { Kysely } from 'kysely';
import { isUuid } from '../db/ids.js';
import { shapes, slots } from '../db/shapes.js';
import type { DB } from '../db/tables.js';

export interface AuditEntry {
  readonly orgId: string;
  /** `admin` or `token:<id>`. */
  readonly actor: string;
  /** e.g. `user.create`, `group.patch`, `token.rotate`. */
  readonly action: string;
  readonly resourceType: string | undefined;
  readonly resourceId: string | undefined;
  readonly status: number;
  readonly requestId: string | undefined;
}

export interface AuditEvent {
  id: string;
  at: string;
  actor: string;
  action: string;
  resourceType: string | null;
  resourceId: string | null;
  status: number;
  requestId: string | null;
}

/** Writes one entry. An organization that no longer exists has no log to write to. */
export async function recordAudit(db: Kysely<DB>, entry: AuditEntry, at = new Date()): Promise<void> {
  if (!isUuid(entry.orgId)) return;
  const row = {
    org_id: entry.orgId,
    at,
    actor: entry.actor,
    action: entry.action,
    resource_type: entry.resourceType ?? null,
    resource_id: entry.resourceId?.slice(0, 200) ?? null,
    status: entry.status,
    request_id: entry.requestId ?? null,
  };
  await db
    .executeQuery(shapes.compile('audit.insert', row, () => db.insertInto('audit_events').values(slots(row))))
    .catch((error: { code?: string }) => {
      // 23503: the organization is gone (deleted, or never existed): nothing to record it in.
      if (error.code !== '23503') throw error;
    });
}

export interface AuditQuery {
  readonly limit: number;
  /** Events older than this id (the previous page's last). */
  readonly before?: string | undefined;
  readonly resourceId?: string | undefined;
  readonly since?: Date | undefined;
  readonly until?: Date | undefined;
}

/** Newest first; `nextBefore` continues the listing when there is more. */
export async function listAudit(
  db: Kysely<DB>,
  orgId: string,
  query: AuditQuery,
): Promise<{ events: AuditEvent[]; nextBefore: string | undefined }> {
  let q = db.selectFrom('audit_events').selectAll().where('org_id', '=', orgId);
  if (query.before) q = q.where('id', '<', query.before);
  if (query.resourceId) q = q.where('resource_id', '=', query.resourceId);
  if (query.since) q = q.where('at', '>=', query.since);
  if (query.until) q = q.where('at', '<', query.until);
  const rows = await q
    .orderBy('id', 'desc')
    .limit(query.limit + 1)
    .execute();
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
