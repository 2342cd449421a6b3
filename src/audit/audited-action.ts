// The audit of an admin API or console action, declared beside its route: `audited('token.rotate',
// 'tokenId')` records who did it, to which resource of which organization, and how it ended, once
// the action has run (or failed). The organization is the route's `:orgId`, or the one the surface
// put in the state (a setup link's); the resource is a route parameter, or, for a creation, the id
// the action made (`created`: the answer's `id`, or the one the route put in the state). The actor is the surface's: the admin, a console session, a setup
// link. An action on no organization (API keys, webhook endpoints), and an organization's deletion,
// which takes its log with it, go to the process log.
import type { Middleware, ParameterizedContext } from 'koa';
import { statusOf } from '../http/failure.js';
import type { RouteState } from '../http/route-state.js';
import type { Logger } from '../log.js';
import { resourceTypeOf } from './audit.js';
import type { AuditLog } from './audit-log.js';

/** `created`: the resource is what the action created; otherwise the named route parameter, or the organization. */
type ResourceOf = 'created' | string | undefined;

export function auditedActions(log: Pick<AuditLog, 'record'>, logger: Logger) {
  return (action: string, resource?: ResourceOf): Middleware<RouteState> =>
    async (ctx, next) => {
      let status: number;
      try {
        await next();
        // A console form answers with a redirect or a page; the entry says what the action did.
        status =
          ctx.status >= 400
            ? ctx.status
            : resource === 'created'
              ? 201
              : ctx.status >= 300
                ? 200
                : ctx.status;
      } catch (error) {
        status = statusOf(error);
        throw error;
      } finally {
        await record(ctx, action, resource, status!);
      }
    };

  async function record(
    ctx: ParameterizedContext<RouteState>,
    action: string,
    resource: ResourceOf,
    status: number,
  ): Promise<void> {
    const params = (ctx as { params?: Record<string, string> }).params ?? {};
    const bodyId = (ctx.body as { id?: unknown } | undefined)?.id;
    const createdId = ctx.state.resourceId ?? (typeof bodyId === 'string' ? bodyId : undefined);
    const resourceId =
      resource === 'created' ? createdId : resource ? params[resource] : ctx.state.resourceId;
    const orgId = params.orgId ?? ctx.state.orgId ?? (action === 'org.create' ? createdId : undefined);
    const requestId = ctx.state.requestId;
    if (!orgId || (action === 'org.delete' && status < 400)) {
      const what = action === 'org.delete' ? 'organization deleted with its data' : 'admin action';
      logger.info({ action, orgId, id: resourceId, status, requestId }, what);
      return;
    }
    await log.record({
      orgId,
      actor: ctx.state.actor,
      action,
      resourceType: resourceTypeOf(action),
      // A creation refused names no resource; any other action names the organization at least.
      resourceId: resource === 'created' ? createdId : (resourceId ?? orgId),
      status,
      requestId,
    });
  }
}

export type Audited = ReturnType<typeof auditedActions>;
