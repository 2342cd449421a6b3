// The audit entries written apart from a change: a SCIM write that was refused or failed, and every
// admin API and console action. (A SCIM write that succeeds writes its entry in its own statement:
// audited-write.ts.) Entries of an organization that arrive together share an INSERT, as concurrent
// writes do (db/write-batches.ts). One instance per process, created with the app.
import type { Kysely } from 'kysely';
import { isUuid } from '../db/ids.js';
import type { DB } from '../db/tables.js';
import { WriteBatches } from '../db/write-batches.js';
import type { Logger } from '../log.js';
import type { AuditEntry } from './audit.js';
import { auditValues, insertAuditBatch } from './audit.repository.js';

interface Timed {
  readonly entry: AuditEntry;
  readonly at: Date;
}

export class AuditLog {
  readonly #entries = new WriteBatches<Timed, void>({
    row: ({ entry, at }) => auditValues(entry, at),
    writeAll: async (db, _orgId, entries, batch) => {
      await insertAuditBatch(db, batch);
      return entries.map(() => undefined);
    },
  });

  constructor(
    private readonly db: Kysely<DB>,
    private readonly logger: Logger,
  ) {}

  /**
   * Writes the entry; resolves once it is stored. It never fails: an entry the database cannot take
   * goes to the process log instead, and one whose organization is gone (deleted meanwhile) has no
   * log to go to.
   */
  async record(entry: AuditEntry, at = new Date()): Promise<void> {
    if (!isUuid(entry.orgId)) return;
    try {
      await this.#entries.write(this.db, entry.orgId.toLowerCase(), { entry, at });
    } catch (err) {
      if (orgIsGone(err)) return;
      this.logger.error({ err, audit: entry, requestId: entry.requestId }, 'could not write an audit entry');
    }
  }
}

/** 23503: the organization is gone (deleted, or never existed): nothing to record it in. */
function orgIsGone(error: unknown): boolean {
  return (error as { code?: unknown } | null | undefined)?.code === '23503';
}
