// The organization's audit log: who (a token or the admin) did what to which resource, with what
// outcome, under which request id. Never a secret and never an attribute value.
import { type Insertable, type Kysely, sql } from 'kysely';
import { isUuid } from '../db/ids.js';
import { shapes, slots } from '../db/shapes.js';
import type { AuditEventsTable, DB } from '../db/tables.js';
import { storableText } from '../db/text.js';

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

/** Entries written by one INSERT at most. */
export const MAX_AUDIT_BATCH = 100;

interface Pending {
  readonly row: AuditRow;
  /** Called once the entry is stored, or dropped because its organization is gone. */
  readonly stored: () => void;
  readonly failed: (error: unknown) => void;
}

export type AuditRow = Omit<Insertable<AuditEventsTable>, 'id'>;

/** The row of an entry, its texts made storable (a decoded path can carry a NUL). */
export function auditRow(entry: AuditEntry, at: Date): AuditRow {
  return {
    org_id: entry.orgId,
    at,
    actor: entry.actor,
    action: entry.action,
    resource_type: entry.resourceType ?? null,
    resource_id: entry.resourceId === undefined ? null : storableText(entry.resourceId.slice(0, 200)),
    status: entry.status,
    request_id: entry.requestId ?? null,
  };
}

/**
 * Writes the audit entries that are not written with a change (failed writes, admin actions), and
 * resolves each caller's promise once its entry is stored. Entries that arrive while a write is in
 * flight wait for it, then go together in one INSERT: one statement and one commit for many. At
 * rest an entry is written at once. A batch that fails is written again
 * one entry at a time, so only the entry at fault fails (its caller is told) or, when its
 * organization no longer exists and has no log to write to, is dropped. Meanwhile the entries that
 * arrive wait: a batch of 100 that fails costs them 100 statements' time, once.
 */
export class AuditWriter {
  private pending: Pending[] = [];
  private writing = false;

  constructor(private readonly db: Kysely<DB>) {}

  record(entry: AuditEntry, at = new Date()): Promise<void> {
    if (!isUuid(entry.orgId)) return Promise.resolve();
    const row = auditRow(entry, at);
    return new Promise((resolve, reject) => {
      this.pending.push({ row, stored: resolve, failed: reject });
      if (!this.writing) void this.writeAll();
    });
  }

  private async writeAll(): Promise<void> {
    this.writing = true;
    try {
      while (this.pending.length > 0) await this.write(this.pending.splice(0, MAX_AUDIT_BATCH));
    } finally {
      this.writing = false;
    }
  }

  private async write(batch: readonly Pending[]): Promise<void> {
    try {
      await insertAudit(
        this.db,
        batch.map((p) => p.row),
      );
      for (const p of batch) p.stored();
    } catch (error) {
      // One entry that cannot be written must not cost the others theirs: a batch that fails is
      // written again one entry at a time, and each caller learns its own entry's fate.
      if (batch.length > 1) {
        for (const p of batch) await this.write([p]);
      } else if (orgIsGone(error)) {
        batch[0]!.stored();
      } else {
        batch[0]!.failed(error);
      }
    }
  }
}

/** 23503: the organization is gone (deleted, or never existed): nothing to record it in. */
function orgIsGone(error: unknown): boolean {
  return (error as { code?: unknown } | null | undefined)?.code === '23503';
}

/** One INSERT for any number of rows (one array per column), in the order given. */
export async function insertAudit(db: Kysely<DB>, rows: readonly AuditRow[]): Promise<void> {
  const columns = {
    org_id: rows.map((r) => r.org_id),
    at: rows.map((r) => r.at),
    actor: rows.map((r) => r.actor),
    action: rows.map((r) => r.action),
    resource_type: rows.map((r) => r.resource_type),
    resource_id: rows.map((r) => r.resource_id),
    status: rows.map((r) => r.status),
    request_id: rows.map((r) => r.request_id),
  };
  await db.executeQuery(
    shapes.compile('audit.insert', columns, () => {
      const c = slots(columns);
      const insert = sql`insert into audit_events (org_id, at, actor, action, resource_type, resource_id, status, request_id)
        select org_id, at, actor, action, resource_type, resource_id, status, request_id
        from unnest(${c.org_id}::uuid[], ${c.at}::timestamptz[], ${c.actor}::text[], ${c.action}::text[],
          ${c.resource_type}::text[], ${c.resource_id}::text[], ${c.status}::integer[], ${c.request_id}::text[])
          with ordinality as e(org_id, at, actor, action, resource_type, resource_id, status, request_id, n)
        order by n`;
      return { compile: () => insert.compile(db) };
    }),
  );
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
