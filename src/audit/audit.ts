// The organization's audit log: who (a token or the admin) did what to which resource, with what
// outcome, under which request id. Never a secret and never an attribute value.
import type { Kysely } from 'kysely';
import { databaseFailure } from '../db/failures.js';
import { isUuid } from '../db/ids.js';
import type { DB } from '../db/tables.js';
import { insertAudit } from './audit.repository.js';

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

/** The audit log's resource type of an organization's action: `token.rotate` → `Token`. */
export function resourceTypeOf(action: string): string {
  const kind = action.slice(0, action.indexOf('.'));
  return ({ org: 'Org', token: 'Token', setup_link: 'SetupLink' } as Record<string, string>)[kind] ?? kind;
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
  readonly entry: AuditEntry;
  readonly at: Date;
  /** Called once the entry is stored, or dropped because its organization is gone. */
  readonly stored: () => void;
  readonly failed: (error: unknown) => void;
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
    return new Promise((resolve, reject) => {
      this.pending.push({ entry, at, stored: resolve, failed: reject });
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
      await insertAudit(this.db, batch);
      for (const p of batch) p.stored();
    } catch (error) {
      // One entry that cannot be written must not cost the others theirs: a batch that fails is
      // written again one entry at a time, and each caller learns its own entry's fate. When the
      // database itself is failing, no entry is at fault, and trying each again would only queue
      // the entries that arrive meanwhile behind a hundred failures.
      if (batch.length > 1 && !databaseFailure(error)) {
        for (const p of batch) await this.write([p]);
      } else if (batch.length === 1 && orgIsGone(error)) {
        batch[0]!.stored();
      } else {
        for (const p of batch) p.failed(error);
      }
    }
  }
}

/** 23503: the organization is gone (deleted, or never existed): nothing to record it in. */
function orgIsGone(error: unknown): boolean {
  return (error as { code?: unknown } | null | undefined)?.code === '23503';
}

export interface AuditQuery {
  readonly limit: number;
  /** Events older than this id (the previous page's last). */
  readonly before?: string | undefined;
  readonly resourceId?: string | undefined;
  readonly since?: Date | undefined;
  readonly until?: Date | undefined;
}
