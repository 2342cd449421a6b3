// The admin API's reading of an organization's audit log.
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import type { Routes } from '../http/route-state.js';
import { listEvents } from './audit-events.service.js';

export function registerAuditRoutes(router: Routes, db: Kysely<DB>): void {
  router.get('/orgs/:orgId/events', async (ctx) => {
    ctx.body = await listEvents(db, ctx.params.orgId!, ctx.query);
  });
}
