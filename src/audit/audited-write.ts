// The audit of SCIM writes. A write that succeeds records its entry with its change, in the same
// transaction (or the same statement), so an entry exists exactly when its change committed. A
// write answered with a failure is recorded after its answer, with its status (scim/after-answer.ts).
import type { Kysely } from 'kysely';
import { isUuid } from '../db/ids.js';
import type { DB } from '../db/tables.js';
import type { AuditEntry } from './audit.js';
import { insertAudit } from './audit.repository.js';

/** A write to a user or a group, as its path and method name it. */
export interface ScimWrite {
  /** e.g. `user.create`, `group.patch`. */
  readonly action: string;
  readonly resourceType: 'User' | 'Group';
  /** The resource the path names; a create names it once done. */
  readonly resourceId: string | undefined;
}

const WRITE_ACTIONS: Readonly<Record<string, string>> = {
  POST: 'create',
  PUT: 'replace',
  PATCH: 'patch',
  DELETE: 'delete',
};
const RESOURCE_PATH = /^\/(Users|Groups)(?:\/([^/]+))?\/?$/i;

/** The write a request makes, from its method and its path after the organization (searches do not). */
export function scimWriteOf(method: string, path: string): ScimWrite | undefined {
  const verb = WRITE_ACTIONS[method];
  if (!verb) return undefined;
  const match = RESOURCE_PATH.exec(path);
  if (!match || match[2]?.toLowerCase() === '.search') return undefined;
  const type = match[1]!.toLowerCase() === 'users' ? 'User' : 'Group';
  let named = match[2];
  try {
    if (named !== undefined) named = decodeURIComponent(named);
  } catch {
    // Kept as sent: the path names nothing that exists.
  }
  // An id in the path matches whatever its case; the log keeps the id as stored (lower case).
  const resourceId = named !== undefined && isUuid(named) ? named.toLowerCase() : named;
  return { action: `${type.toLowerCase()}.${verb}`, resourceType: type, resourceId };
}

/** What the audit of a request needs to know of it. */
export interface AuditedRequest {
  readonly requestId: string;
  readonly write: ScimWrite | undefined;
}

/** The entry of `write` by `actor` in `orgId`, answered `status`. */
export function writeEntry(
  request: AuditedRequest,
  orgId: string,
  actor: string,
  status: number,
  resourceId?: string,
): AuditEntry {
  const write = request.write!;
  return {
    orgId,
    actor,
    action: write.action,
    resourceType: write.resourceType,
    resourceId: resourceId ?? write.resourceId,
    status,
    requestId: request.requestId,
  };
}

/** What a write did: its answer, and the resource it wrote. */
export interface Written<B = unknown> {
  readonly status: number;
  readonly resourceId: string | undefined;
  readonly body?: B;
}

/** The entry of this write, answered `status`, for a write that records it itself. */
export type EntryOf = (status: number, resourceId?: string) => AuditEntry;

interface AuditedWriteScope extends AuditedRequest {
  readonly db: Kysely<DB>;
  readonly org: { readonly id: string };
  readonly token: { readonly tokenId: string };
}

/**
 * Runs a SCIM write and records its audit entry with it. By default `work` runs in a transaction
 * that also inserts the entry, with the status `work` returns. A write that writes its entry itself
 * passes `{ writesItsEntry: true }`: it runs on the database, without a transaction, and writes the
 * entry `entryOf` gives it with its change (in the same statement, or in a transaction of its own).
 */
export async function auditedWrite<B>(
  state: AuditedWriteScope,
  work: (db: Kysely<DB>, entryOf: EntryOf) => Promise<Written<B>>,
  options: { writesItsEntry?: boolean } = {},
): Promise<Written<B>> {
  const actor = `token:${state.token.tokenId}`;
  const entryOf: EntryOf = (status, resourceId) => writeEntry(state, state.org.id, actor, status, resourceId);
  let written: Written<B>;
  if (options.writesItsEntry) {
    let entryWritten = false;
    written = await work(state.db, (status, resourceId) => {
      entryWritten = true;
      return entryOf(status, resourceId);
    });
    if (!entryWritten)
      throw new Error('a write that writes its own audit entry must write the one entryOf gives it');
  } else {
    written = await state.db.transaction().execute(async (trx) => {
      const done = await work(trx, entryOf);
      await insertAudit(trx, [{ entry: entryOf(done.status, done.resourceId), at: new Date() }]);
      return done;
    });
  }
  return written;
}
