import type Router from '@koa/router';
import type { RouterMiddleware } from '@koa/router';
import { ForbiddenError } from '../http/scim-errors.js';
import { auditedTransaction, respond, type ScimDeps, type ScimState } from '../http/scim-state.js';
import * as groups from './groups.service.js';
import { type ListParams, listParamsFromQuery, listParamsFromSearchRequest } from './list-params.js';
import { prefersRepresentation } from './prefer.js';
import { isReturned, type ProjectionParams, projectAttributes, projectionFromQuery } from './projection.js';
import { requireScope } from './scopes.js';
import { search } from './search.service.js';

export const GROUP_SYNC_DISABLED = 'Group synchronization is disabled for this organization';

/** While the organization's groupSync is off, every group operation is 403 (product spec, SCIM rule 2). */
export const requireGroupSync: RouterMiddleware<ScimState> = async (ctx, next) => {
  if (!ctx.state.org.groupSync) throw new ForbiddenError(GROUP_SYNC_DISABLED);
  await next();
};

export function registerGroupRoutes(router: Router<ScimState>, deps: ScimDeps): void {
  const { db } = deps;
  const guard = [requireScope('groups'), requireGroupSync] as const;
  const withMembers = (projection: ProjectionParams) => isReturned(groups.groupType, projection, 'members');

  const list = (state: ScimState, params: ListParams) =>
    search(
      groups.searchableGroups(db, state.org.id, state.baseUrl, withMembers(params.projection)),
      state.org,
      params,
    );

  router.get('/Groups', ...guard, async (ctx) => {
    respond(ctx, 200, await list(ctx.state, listParamsFromQuery(ctx.query)));
  });

  router.post('/Groups/.search', ...guard, async (ctx) => {
    respond(ctx, 200, await list(ctx.state, listParamsFromSearchRequest(ctx.request.body)));
  });

  /** Renders a group as the projection asks, reading the member rows only when it carries them. */
  const render = async (
    orgId: string,
    baseUrl: string,
    group: Awaited<ReturnType<typeof groups.getGroup>>,
    projection: ProjectionParams,
  ) => {
    const members = withMembers(projection) ? await groups.membersOf(db, orgId, group.id) : undefined;
    return projectAttributes(groups.renderGroup(group, baseUrl, members), groups.groupType, projection);
  };

  router.post('/Groups', ...guard, async (ctx) => {
    const projection = projectionFromQuery(ctx.query);
    const group = await auditedTransaction(db, ctx.state, 201, (trx) =>
      groups.createGroup(trx, ctx.state.org.id, ctx.request.body),
    );
    const body = await render(ctx.state.org.id, ctx.state.baseUrl, group, projection);
    ctx.set('Location', `${ctx.state.baseUrl}/Groups/${group.id}`);
    respond(ctx, 201, body);
  });

  router.get('/Groups/:id', ...guard, async (ctx) => {
    const projection = projectionFromQuery(ctx.query);
    const group = await groups.getGroup(db, ctx.state.org.id, ctx.params.id!);
    respond(ctx, 200, await render(ctx.state.org.id, ctx.state.baseUrl, group, projection));
  });

  router.put('/Groups/:id', ...guard, async (ctx) => {
    const projection = projectionFromQuery(ctx.query);
    const group = await auditedTransaction(db, ctx.state, 200, (trx) =>
      groups.replaceGroup(trx, ctx.state.org.id, ctx.params.id!, ctx.request.body),
    );
    respond(ctx, 200, await render(ctx.state.org.id, ctx.state.baseUrl, group, projection));
  });

  // Entra asks for 204 on group PATCH (returning every member is the cost IdPs avoid); the group
  // comes back when the client asks for it with attributes/excludedAttributes or Prefer.
  router.patch('/Groups/:id', ...guard, async (ctx) => {
    const projection = projectionFromQuery(ctx.query);
    const wantsBody =
      projection.attributes !== undefined ||
      projection.excludedAttributes !== undefined ||
      prefersRepresentation(ctx.get('prefer'));
    const group = await auditedTransaction(db, ctx.state, wantsBody ? 200 : 204, (trx) =>
      groups.patchGroup(trx, ctx.state.org.id, ctx.params.id!, ctx.request.body),
    );
    if (!wantsBody) return respond(ctx, 204);
    respond(ctx, 200, await render(ctx.state.org.id, ctx.state.baseUrl, group, projection));
  });

  router.delete('/Groups/:id', ...guard, async (ctx) => {
    await auditedTransaction(db, ctx.state, 204, async (trx) => {
      await groups.deleteGroup(trx, ctx.state.org.id, ctx.params.id!);
      return undefined;
    });
    respond(ctx, 204);
  });
}
