import type Router from '@koa/router';
import type { RouterMiddleware } from '@koa/router';
import { auditedWrite } from '../audit/audited-write.js';
import { respond } from '../http/respond.js';
import { ForbiddenError } from '../http/scim-errors.js';
import type { StoredMember } from './groups.js';
import * as groups from './groups.service.js';
import { patchGroup } from './groups-patch.service.js';
import { type ListParams, listParamsFromQuery, listParamsFromSearchRequest } from './list-params.js';
import { prefersRepresentation } from './prefer.js';
import { isReturned, type ProjectionParams, projectAttributes, projectionFromQuery } from './projection.js';
import type { ScimState } from './scim-state.js';
import { requireScope } from './scopes.js';
import { search } from './search.service.js';

export const GROUP_SYNC_DISABLED = 'Group synchronization is disabled for this organization';

/** Groups are opt-in per organization: while its groupSync is off, every group operation is 403. */
const requireGroupSync: RouterMiddleware<ScimState> = async (ctx, next) => {
  if (!ctx.state.org.groupSync) throw new ForbiddenError(GROUP_SYNC_DISABLED, 'group_sync_disabled');
  await next();
};

export function registerGroupRoutes(router: Router<ScimState>): void {
  const guard = [requireScope('groups'), requireGroupSync] as const;
  const withMembers = (state: ScimState, projection: ProjectionParams) =>
    isReturned(state.registry.types.Group, projection, 'members');

  const list = (state: ScimState, params: ListParams) =>
    search(
      groups.searchableGroups(
        state.db,
        state.org.id,
        state.registry.types.Group,
        state.baseUrl,
        withMembers(state, params.projection),
        state.scopes,
        state.pages,
      ),
      state.org,
      params,
    );

  router.get('/Groups', ...guard, async (ctx) => {
    respond(ctx, 200, await list(ctx.state, listParamsFromQuery(ctx.query)));
  });

  router.post('/Groups/.search', ...guard, async (ctx) => {
    respond(ctx, 200, await list(ctx.state, listParamsFromSearchRequest(ctx.request.body)));
  });

  /**
   * Renders a group as the projection asks, with its members when it carries them: `known` ones, or
   * the member rows read on `db` (the write's transaction, when it renders what it wrote).
   */
  const render = async (
    db: ScimState['db'],
    state: ScimState,
    group: Awaited<ReturnType<typeof groups.getGroup>>,
    projection: ProjectionParams,
    known?: StoredMember[],
  ) => {
    const type = state.registry.types.Group;
    const members = withMembers(state, projection)
      ? (known ?? (await groups.membersOf(db, state.org.id, group.id)))
      : undefined;
    return projectAttributes(
      groups.renderGroup(group, type, state.baseUrl, members, state.scopes),
      type,
      projection,
    );
  };

  // Creating a group is one statement with its members and its audit entry, like POST /Users.
  router.post('/Groups', ...guard, async (ctx) => {
    const projection = projectionFromQuery(ctx.query);
    const { group, members } = (
      await auditedWrite(
        ctx.state,
        async (db, entryOf) => {
          const created = await groups.createGroup(
            ctx.state.writes,
            db,
            ctx.state.org.id,
            ctx.state.registry.types.Group,
            ctx.request.body,
            (id) => entryOf(201, id),
          );
          return { status: 201, resourceId: created.group.id, body: created };
        },
        { writesItsEntry: true },
      )
    ).body!;
    ctx.set('Location', `${ctx.state.baseUrl}/Groups/${group.id}`);
    // A group created without members is answered without reading them.
    respond(
      ctx,
      201,
      await render(ctx.state.db, ctx.state, group, projection, members.length === 0 ? [] : undefined),
    );
  });

  router.get('/Groups/:id', ...guard, async (ctx) => {
    const projection = projectionFromQuery(ctx.query);
    const group = await groups.getGroup(ctx.state.db, ctx.state.org.id, ctx.params.id!);
    respond(ctx, 200, await render(ctx.state.db, ctx.state, group, projection));
  });

  router.put('/Groups/:id', ...guard, async (ctx) => {
    const projection = projectionFromQuery(ctx.query);
    const { status, body } = await auditedWrite(ctx.state, async (trx) => {
      const group = await groups.replaceGroup(
        trx,
        ctx.state.org.id,
        ctx.state.registry.types.Group,
        ctx.params.id!,
        ctx.request.body,
      );
      return { status: 200, resourceId: group.id, body: await render(trx, ctx.state, group, projection) };
    });
    respond(ctx, status, body);
  });

  // Entra asks for 204 on group PATCH (returning every member is the cost IdPs avoid); the group
  // comes back when the client asks for it with attributes/excludedAttributes or Prefer.
  router.patch('/Groups/:id', ...guard, async (ctx) => {
    const projection = projectionFromQuery(ctx.query);
    const wantsBody =
      projection.attributes !== undefined ||
      projection.excludedAttributes !== undefined ||
      prefersRepresentation(ctx.get('prefer'));
    const status = wantsBody ? 200 : 204;
    // The PATCH writes its entry with its change (one statement, or its own transaction).
    const { body } = await auditedWrite(
      ctx.state,
      async (db, entryOf) => {
        const group = await patchGroup(
          ctx.state.writes,
          db,
          ctx.state.org.id,
          ctx.state.registry.types.Group,
          ctx.params.id!,
          ctx.request.body,
          entryOf(status),
          wantsBody,
        );
        if (!group) return { status, resourceId: ctx.params.id };
        return { status, resourceId: group.id, body: await render(db, ctx.state, group, projection) };
      },
      { writesItsEntry: true },
    );
    respond(ctx, status, body);
  });

  router.delete('/Groups/:id', ...guard, async (ctx) => {
    const { status } = await auditedWrite(ctx.state, async (trx) => {
      await groups.deleteGroup(trx, ctx.state.org.id, ctx.params.id!);
      return { status: 204, resourceId: undefined };
    });
    respond(ctx, status);
  });
}
