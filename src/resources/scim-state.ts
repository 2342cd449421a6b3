// What the SCIM surface's middlewares establish for the routes of users, groups and discovery, in order
// (scim/scim-api.ts): its scope (scim/scope.ts), then its token (scim/authenticate.ts).
import type { Kysely } from 'kysely';
import type { ScimWrite } from '../audit/audited-write.js';
import type { DB, TokenScope } from '../db/tables.js';
import type { ScimError } from '../http/scim-errors.js';
import type { OrgContext } from '../orgs/org-context.js';
import type { AuthenticatedToken } from '../orgs/scim-auth.js';
import type { Registry } from '../schema/registry.js';
import type { PagePositions } from './page-positions.js';
import type { ResourceWrites } from './resource-writes.js';

export interface ScimState {
  requestId: string;
  /** The organization the URL names (decoded; possibly none that exists). */
  orgId: string;
  /** The database within the organization's share of the pool: every query of the request. */
  db: Kysely<DB>;
  /** `{PUBLIC_URL}/scim/v2/{orgId}`: the organization's base URL, absolute. */
  baseUrl: string;
  /** The process's batched writes of users and groups (resource-writes.ts). */
  writes: ResourceWrites;
  /** Where the process remembers index pages to start (page-positions.ts). */
  pages: PagePositions;
  /** The write to a user or a group this request makes, if it makes one (audited-write.ts). */
  write: ScimWrite | undefined;
  /** Set by authentication. */
  token: AuthenticatedToken;
  org: OrgContext;
  scopes: readonly TokenScope[];
  /** The organization's schemas and resource types: the standard ones and its own. */
  registry: Registry;
  /** The error the request was answered with, if it failed (render-errors.ts). */
  failure?: ScimError;
}
