// The admin API's sync health of an organization.
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { invalidRequest } from '../http/admin-errors.js';
import type { Routes } from '../http/route-state.js';
import type { SyncActivity } from './sync-activity.js';
import { orgHealth } from './sync-health.service.js';

export interface HealthRoutesDeps {
  readonly db: Kysely<DB>;
  readonly activity: Pick<SyncActivity, 'flush'>;
  /** No request for this long: an organization's sync is idle. */
  readonly idleAfterMs: number;
}

export function registerHealthRoutes(router: Routes, deps: HealthRoutesDeps): void {
  router.get('/orgs/:orgId/health', async (ctx) => {
    // This process's activity is written first, so what it has just served shows at once.
    await deps.activity.flush();
    const failures = ctx.query.failures === undefined ? undefined : Number(ctx.query.failures);
    if (failures !== undefined && !(Number.isInteger(failures) && failures >= 0 && failures <= 100))
      throw invalidRequest('failures must be a whole number from 0 to 100');
    ctx.body = await orgHealth(deps.db, ctx.params.orgId!, new Date(), {
      idleAfterMs: deps.idleAfterMs,
      failures,
    });
  });
}
