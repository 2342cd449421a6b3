import type { RouterContext } from '@koa/router';
import type { Kysely } from 'kysely';
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
