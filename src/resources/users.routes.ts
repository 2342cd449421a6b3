import type Router from '@koa/router';
import { auditedWrite } from '../audit/audited-write.js';
import { respond } from '../http/respond.js';
import { type ListParams, listParamsFromQuery, listParamsFromSearchRequest } from './list-params.js';
import { prefersMinimal } from './prefer.js';
import { isReturned, type ProjectionParams, projectAttributes, projectionFromQuery } from './projection.js';
import type { ScimState } from './scim-state.js';
import { requireScope } from './scopes.js';
import { search } from './search.service.js';
import type { StoredUser } from './users.js';
import * as users from './users.service.js';

export function registerUserRoutes(router: Router<ScimState>): void {
  const scope = requireScope('users');
  const withGroups = (state: ScimState, projection: ProjectionParams) =>
    isReturned(state.registry.types.User, projection, 'groups');

  /** Renders a user (read with its groups) as the projection asks and the token may see. */
  const render = (state: ScimState, user: StoredUser, projection: ProjectionParams) => {
    const type = state.registry.types.User;
    return projectAttributes(
      users.renderUser(users.visibleTo(user, state.scopes), type, state.baseUrl),
      type,
      projection,
    );
  };

  const list = (state: ScimState, params: ListParams) =>
    search(
      users.searchableUsers(
        state.db,
        state.org.id,
        state.registry.types.User,
        state.baseUrl,
        state.scopes,
        withGroups(state, params.projection),
        state.pages,
      ),
      state.org,
      params,
    );

  router.get('/Users', scope, async (ctx) => {
    respond(ctx, 200, await list(ctx.state, listParamsFromQuery(ctx.query)));
  });

  // RFC 7644 §3.4.3: the same search with its parameters in the body.
  router.post('/Users/.search', scope, async (ctx) => {
    respond(ctx, 200, await list(ctx.state, listParamsFromSearchRequest(ctx.request.body)));
  });

  router.post('/Users', scope, async (ctx) => {
    const projection = projectionFromQuery(ctx.query);
    // Creating a user is one statement, atomic on its own, that writes its audit entry too: no
    // transaction (BEGIN and COMMIT would multiply the round trips of the commonest write).
    const { body, resourceId } = await auditedWrite(
      ctx.state,
      async (db, entryOf) => {
        const user = await users.createUser(
          ctx.state.writes.users,
          db,
          ctx.state.org.id,
          ctx.state.registry.types.User,
          ctx.request.body,
          (id) => entryOf(201, id),
        );
        return { status: 201, resourceId: user.id, body: render(ctx.state, user, projection) };
      },
      { writesItsEntry: true },
    );
    ctx.set('Location', `${ctx.state.baseUrl}/Users/${resourceId}`);
    respond(ctx, 201, body);
  });

  router.get('/Users/:id', scope, async (ctx) => {
    const projection = projectionFromQuery(ctx.query);
    const user = await users.getUser(ctx.state.db, ctx.state.org.id, ctx.params.id!);
    respond(ctx, 200, render(ctx.state, user, projection));
  });

  // PUT, PATCH and DELETE write their audit entry in the statement of their change, like POST.
  router.put('/Users/:id', scope, async (ctx) => {
    const projection = projectionFromQuery(ctx.query);
    const { status, body } = await auditedWrite(
      ctx.state,
      async (db, entryOf) => {
        const user = await users.replaceUser(
          ctx.state.writes.users,
          db,
          ctx.state.org.id,
          ctx.state.registry.types.User,
          ctx.params.id!,
          ctx.request.body,
          entryOf(200),
        );
        return { status: 200, resourceId: user.id, body: render(ctx.state, user, projection) };
      },
      { writesItsEntry: true },
    );
    respond(ctx, status, body);
  });

  router.patch('/Users/:id', scope, async (ctx) => {
    const projection = projectionFromQuery(ctx.query);
    // RFC 7240: `Prefer: return=minimal` asks for 204 without a body, unless the request names
    // attributes, which RFC 7644 §3.5.2 answers with 200 and the resource.
    const projected = projection.attributes !== undefined || projection.excludedAttributes !== undefined;
    const minimal = prefersMinimal(ctx.get('prefer')) && !projected;
    const status = minimal ? 204 : 200;
    const { body } = await auditedWrite(
      ctx.state,
      async (db, entryOf) => {
        const user = await users.patchUser(
          ctx.state.writes.users,
          db,
          ctx.state.org.id,
          ctx.state.registry.types.User,
          ctx.params.id!,
          ctx.request.body,
          entryOf(status),
        );
        return {
          status,
          resourceId: user.id,
          ...(minimal ? {} : { body: render(ctx.state, user, projection) }),
        };
      },
      { writesItsEntry: true },
    );
    respond(ctx, status, body);
  });

  router.delete('/Users/:id', scope, async (ctx) => {
    await auditedWrite(
      ctx.state,
      async (db, entryOf) => {
        await users.deleteUser(ctx.state.writes.users, db, ctx.state.org, ctx.params.id!, entryOf(204));
        return { status: 204, resourceId: undefined };
      },
      { writesItsEntry: true },
    );
    respond(ctx, 204);
  });
}
