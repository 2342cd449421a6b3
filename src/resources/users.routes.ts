import type Router from '@koa/router';
import {
  auditedStatement,
  auditedTransaction,
  respond,
  type ScimDeps,
  type ScimState,
} from '../http/scim-state.js';
import { type ListParams, listParamsFromQuery, listParamsFromSearchRequest } from './list-params.js';
import { prefersMinimal } from './prefer.js';
import { isReturned, type ProjectionParams, projectAttributes, projectionFromQuery } from './projection.js';
import { requireScope } from './scopes.js';
import { search } from './search.service.js';
import type { StoredUser } from './users.repository.js';
import * as users from './users.service.js';

export function registerUserRoutes(router: Router<ScimState>, deps: ScimDeps): void {
  const { db } = deps;
  const scope = requireScope('users');
  const withGroups = (projection: ProjectionParams) => isReturned(users.userType, projection, 'groups');

  /** Renders a user (read with its groups) as the projection asks. */
  const render = (state: ScimState, user: StoredUser, projection: ProjectionParams) =>
    projectAttributes(users.renderUser(user, state.baseUrl), users.userType, projection);

  const list = (state: ScimState, params: ListParams) =>
    search(
      users.searchableUsers(db, state.org.id, state.baseUrl, withGroups(params.projection)),
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
    // transaction (BEGIN and COMMIT would double the round trips of the commonest write).
    const user = await auditedStatement(ctx.state, 201, (entry) =>
      users.createUser(db, ctx.state.org.id, ctx.request.body, entry),
    );
    ctx.set('Location', `${ctx.state.baseUrl}/Users/${user.id}`);
    respond(ctx, 201, render(ctx.state, user, projection));
  });

  router.get('/Users/:id', scope, async (ctx) => {
    const projection = projectionFromQuery(ctx.query);
    const user = await users.getUser(db, ctx.state.org.id, ctx.params.id!);
    respond(ctx, 200, render(ctx.state, user, projection));
  });

  router.put('/Users/:id', scope, async (ctx) => {
    const projection = projectionFromQuery(ctx.query);
    const user = await auditedTransaction(db, ctx.state, 200, (trx) =>
      users.replaceUser(trx, ctx.state.org.id, ctx.params.id!, ctx.request.body),
    );
    respond(ctx, 200, render(ctx.state, user, projection));
  });

  router.patch('/Users/:id', scope, async (ctx) => {
    const projection = projectionFromQuery(ctx.query);
    // RFC 7240: `Prefer: return=minimal` asks for 204 without a body, unless the request names
    // attributes, which RFC 7644 §3.5.2 answers with 200 and the resource.
    const projected = projection.attributes !== undefined || projection.excludedAttributes !== undefined;
    const minimal = prefersMinimal(ctx.get('prefer')) && !projected;
    const user = await auditedTransaction(db, ctx.state, minimal ? 204 : 200, (trx) =>
      users.patchUser(trx, ctx.state.org.id, ctx.params.id!, ctx.request.body),
    );
    if (minimal) return respond(ctx, 204);
    respond(ctx, 200, render(ctx.state, user, projection));
  });

  router.delete('/Users/:id', scope, async (ctx) => {
    await auditedTransaction(db, ctx.state, 204, async (trx) => {
      await users.deleteUser(trx, ctx.state.org, ctx.params.id!);
      return undefined;
    });
    respond(ctx, 204);
  });
}
