import type { RouterContext } from '@koa/router';
import type { Kysely, Transaction } from 'kysely';
import { type AuditEntry, type AuditRow, auditRow, insertAudit } from '../audit/audit.js';
import type { DB, DeprovisioningMode, TokenScope } from '../db/tables.js';

export interface OrgContext {
  readonly id: string;
  readonly groupSync: boolean;
  readonly deprovisioning: DeprovisioningMode;
  /** Signs the organization's paging cursors. */
  readonly cursorKey: Buffer;
}

/** What authentication established for a SCIM request. */
export interface ScimState {
  org: OrgContext;
  tokenId: string;
  scopes: readonly TokenScope[];
  /** `{PUBLIC_URL}/scim/v2/{orgId}`: the organization's base URL, absolute. */
  baseUrl: string;
  requestId: string;
  /** For a write to a user or a group: its audit entry, written with the change (auditedTransaction). */
  audit: PendingAudit | undefined;
}

/** The audit entry of a write, known before the write runs but for its outcome. */
export interface PendingAudit {
  /** The entry of the write answered with `status`; `resourceId` names what it wrote, if the path does not. */
  entry(status: number, resourceId?: string): AuditEntry;
  /** Set once the change has committed with its entry: scim-api then writes no entry of its own. */
  committed: boolean;
}

/**
 * Runs a write to a user or a group in one transaction together with the audit entry of its success
 * (answered with `status`), so that the entry exists exactly when the change committed. scim-api
 * writes the entries of writes that did not commit, after the answer.
 */
export async function auditedTransaction<T extends { id: string } | undefined>(
  db: Kysely<DB>,
  state: ScimState,
  status: number,
  work: (trx: Transaction<DB>) => Promise<T>,
): Promise<T> {
  const result = await db.transaction().execute(async (trx) => {
    const done = await work(trx);
    if (state.audit) await insertAudit(trx, [auditRow(state.audit.entry(status, done?.id), new Date())]);
    return done;
  });
  if (state.audit) state.audit.committed = true;
  return result;
}

/** The same for a write that is one statement (POST /Users): `work` writes the row `entry` gives it. */
export async function auditedStatement<T>(
  state: ScimState,
  status: number,
  work: (entry: (id: string) => AuditRow | undefined) => Promise<T>,
): Promise<T> {
  const result = await work((id) => state.audit && auditRow(state.audit.entry(status, id), new Date()));
  if (state.audit) state.audit.committed = true;
  return result;
}

export interface ScimDeps {
  readonly db: Kysely<DB>;
  readonly publicUrl: string;
}

export type ScimContext = RouterContext<ScimState>;

export const SCIM_CONTENT_TYPE = 'application/scim+json';

export function respond(
  ctx: { status: number; body: unknown; type: string },
  status: number,
  body?: unknown,
): void {
  ctx.status = status;
  if (body !== undefined) {
    ctx.body = body;
    ctx.type = SCIM_CONTENT_TYPE;
  }
}

/** One value of a query parameter: the first when repeated. Koa decodes `+` as a space (Entra sends it). */
export function queryParam(ctx: { query: Record<string, string | string[] | undefined> }, name: string) {
  const value = ctx.query[name];
  return Array.isArray(value) ? value[0] : value;
}
