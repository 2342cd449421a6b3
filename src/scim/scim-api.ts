// Everything under {PUBLIC_URL}/scim/v2/{orgId}: one middleware per job, in order, then the routes,
// which match the path after the organization (scope.ts).
import Router from '@koa/router';
import type { Middleware } from 'koa';
import compose from 'koa-compose';
import type { AuditLog } from '../audit/audit-log.js';
import type { ChangeFeed } from '../changes/change-feed.js';
import { OrgRegistries } from '../custom-schemas/org-registries.js';
import type { Database } from '../db/database.js';
import { registerDiscoveryRoutes } from '../discovery/discovery.routes.js';
import { DiscoveryDocuments } from '../discovery/discovery-documents.js';
import type { SyncActivity } from '../health/sync-activity.js';
import { NotImplementedError } from '../http/scim-errors.js';
import { isScimPath } from '../http/scim-path.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics/metrics.js';
import type { TokenChecks } from '../orgs/scim-auth.js';
import { registerGroupRoutes } from '../resources/groups.routes.js';
import type { PagePositions } from '../resources/page-positions.js';
import type { ResourceWrites } from '../resources/resource-writes.js';
import type { ScimState } from '../resources/scim-state.js';
import { registerRootSearch } from '../resources/search.routes.js';
import { registerUserRoutes } from '../resources/users.routes.js';
import { registerCatalogueRoutes } from '../roles/catalogue.routes.js';
import { recordAfterAnswer } from './after-answer.js';
import { authenticate } from './authenticate.js';
import { jsonBody } from './json-body.js';
import { noRoute } from './no-route.js';
import { renderScimErrors } from './render-errors.js';
import { requireOrganization } from './require-organization.js';
import { scimScope } from './scope.js';

export interface ScimApiDeps {
  readonly database: Pick<Database, 'forOrg'>;
  readonly publicUrl: string;
  readonly logger: Logger;
  readonly tokenChecks: TokenChecks;
  readonly audit: AuditLog;
  readonly changes: Pick<ChangeFeed, 'written'>;
  readonly activity: Pick<SyncActivity, 'record'>;
  readonly metrics: Pick<Metrics, 'scimOperation' | 'databaseFailure'>;
  /** The process's batched writes of users and groups. */
  readonly writes: ResourceWrites;
  /** Where the process remembers index pages to start. */
  readonly pages: PagePositions;
  /** The time tokens' expiry is checked against; the wall clock unless given (tests give their own). */
  readonly now?: () => Date;
}

function buildRouter(documents: DiscoveryDocuments): Router<ScimState> {
  // Routes match case-insensitively and with or without a trailing slash (`/users`, `/Users/`): the
  // Microsoft collection sends both.
  const router = new Router<ScimState>({ sensitive: false, strict: false });
  registerDiscoveryRoutes(router, documents);
  registerUserRoutes(router);
  registerGroupRoutes(router);
  registerRootSearch(router);
  registerCatalogueRoutes(router);
  const notImplemented = (what: string) => () => {
    throw new NotImplementedError(`${what} is not supported by this service provider`);
  };
  router.all('/Bulk', notImplemented('Bulk'));
  router.all('/Me', notImplemented('/Me'));
  return router;
}

export function scimApi(deps: ScimApiDeps): Middleware {
  const router = buildRouter(new DiscoveryDocuments());
  const chain = compose([
    scimScope(deps.database, deps.publicUrl, deps),
    recordAfterAnswer(deps),
    renderScimErrors(deps.logger, deps.metrics),
    requireOrganization(deps.publicUrl),
    authenticate(deps.tokenChecks, new OrgRegistries(), deps.now),
    jsonBody(router),
    router.routes() as Middleware<ScimState>,
    noRoute(router),
  ]);
  // noRoute ends the chain: a path under the SCIM base URL goes no further.
  return (ctx, next) => (isScimPath(ctx.path) ? chain(ctx as never, async () => {}) : next());
}
