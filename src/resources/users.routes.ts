import type Router from '@koa/router';
import { queryParam, respond, type ScimDeps, type ScimState } from '../http/scim-state.js';
import { listParamsFromQuery, listParamsFromSearchRequest } from './list-params.js';
import { prefersMinimal } from './prefer.js';
import {
  type ProjectionParams,
  parseAttributeList,
  projectAttributes,
  validateProjectionParams,
} from './projection.js';
import { requireScope } from './scopes.js';
import { search } from './search.service.js';
import * as users from './users.service.js';

function projectionOf(ctx: Parameters<typeof queryParam>[0]): ProjectionParams {
  const params = {
    attributes: parseAttributeList(queryParam(ctx, 'attributes')),
    excludedAttributes: parseAttributeList(queryParam(ctx, 'excludedAttributes')),
  };
  validateProjectionParams(params);
  return params;
}

export function registerUserRoutes(router: Router<ScimState>, deps: ScimDeps): void {
  const { db } = deps;
  const scope = requireScope('users');

  router.get('/Users', scope, async (ctx) => {
    const params = listParamsFromQuery(ctx.query);
    respond(
      ctx,
      200,
      await search(users.searchableUsers(db, ctx.state.org.id, ctx.state.baseUrl), ctx.state.org, params),
    );
  });

  // RFC 7644 §3.4.3: the same search with its parameters in the body. At the base URL it searches
  // every resource type the token may read (Users, until Groups are served).
  router.post('/.search', scope, async (ctx) => {
    const params = listParamsFromSearchRequest(ctx.request.body);
    respond(
      ctx,
      200,
      await search(users.searchableUsers(db, ctx.state.org.id, ctx.state.baseUrl), ctx.state.org, params),
    );
  });

  // RFC 7644 §3.4.3: the same search with its parameters in the body.
  router.post('/Users/.search', scope, async (ctx) => {
    const params = listParamsFromSearchRequest(ctx.request.body);
    respond(
      ctx,
      200,
      await search(users.searchableUsers(db, ctx.state.org.id, ctx.state.baseUrl), ctx.state.org, params),
    );
  });

  router.post('/Users', scope, async (ctx) => {
    const projection = projectionOf(ctx);
    const user = await db
      .transaction()
      .execute((trx) => users.createUser(trx, ctx.state.org.id, ctx.request.body));
    const rendered = users.renderUser(user, ctx.state.baseUrl);
    ctx.set('Location', (rendered.meta as { location: string }).location);
    respond(ctx, 201, projectAttributes(rendered, users.userType, projection));
  });

  router.get('/Users/:id', scope, async (ctx) => {
    const projection = projectionOf(ctx);
    const user = await users.getUser(db, ctx.state.org.id, ctx.params.id!);
    respond(
      ctx,
      200,
      projectAttributes(users.renderUser(user, ctx.state.baseUrl), users.userType, projection),
    );
  });

  router.put('/Users/:id', scope, async (ctx) => {
    const projection = projectionOf(ctx);
    const user = await db
      .transaction()
      .execute((trx) => users.replaceUser(trx, ctx.state.org.id, ctx.params.id!, ctx.request.body));
    respond(
      ctx,
      200,
      projectAttributes(users.renderUser(user, ctx.state.baseUrl), users.userType, projection),
    );
  });

  router.patch('/Users/:id', scope, async (ctx) => {
    const projection = projectionOf(ctx);
    const user = await db
      .transaction()
      .execute((trx) => users.patchUser(trx, ctx.state.org.id, ctx.params.id!, ctx.request.body));
    // RFC 7240: `Prefer: return=minimal` asks for 204 without a body.
    if (prefersMinimal(ctx.get('prefer'))) return respond(ctx, 204);
    respond(
      ctx,
      200,
      projectAttributes(users.renderUser(user, ctx.state.baseUrl), users.userType, projection),
    );
  });

  router.delete('/Users/:id', scope, async (ctx) => {
    await db.transaction().execute((trx) => users.deleteUser(trx, ctx.state.org.id, ctx.params.id!));
    respond(ctx, 204);
  });
}
