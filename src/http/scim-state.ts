import type { RouterContext } from '@koa/router';
import type { Kysely } from 'kysely';
import { type AuditRow, insertAudit } from '../audit/audit.js';
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
  /** For a write to a user or a group: its audit entry, written with the change (successAudit). */
  audit: PendingAudit | undefined;
}

/** The audit entry of a write, known before the write runs but for its outcome. */
export interface PendingAudit {
  /** The entry of the write's success, answered with `status`; `resourceId` names what a create made. */
  entry(status: number, resourceId?: string): AuditRow;
  /** Set when the route writes the entry with its change: scim-api then writes none for a success. */
  written: boolean;
}

/**
 * The audit row of this request's success, for the route to write in its change's own transaction or
 * statement, so that the entry exists if and only if the change committed. scim-api writes the
 * entries of failures after the answer, and the entry of a success no route wrote.
 */
export function successAudit(state: ScimState, status: number, resourceId?: string): AuditRow | undefined {
  if (!state.audit) return undefined;
  state.audit.written = true;
  return state.audit.entry(status, resourceId);
}

/** Writes this request's success entry (successAudit) in `db`: the change's transaction. */
export async function recordSuccess(
  db: Kysely<DB>,
  state: ScimState,
  status: number,
  resourceId?: string,
): Promise<void> {
  const row = successAudit(state, status, resourceId);
  if (row) await insertAudit(db, [row]);
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
