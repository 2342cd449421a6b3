import type Router from '@koa/router';
import { respond } from '../http/respond.js';
import { ForbiddenError } from '../http/scim-errors.js';
import { GROUP_SYNC_DISABLED } from './groups.routes.js';
import * as groups from './groups.service.js';
import { listParamsFromSearchRequest } from './list-params.js';
import { isReturned } from './projection.js';
import type { ScimState } from './scim-state.js';
import { type Searchable, searchAcross } from './search.service.js';
import * as users from './users.service.js';

/**
 * POST /.search at the base URL searches every resource type the token may read: Users with the
 * users scope, Groups with the groups scope while group synchronization is on.
 */
export function registerRootSearch(router: Router<ScimState>): void {
  router.post('/.search', async (ctx) => {
    const params = listParamsFromSearchRequest(ctx.request.body);
    const { db, org, scopes, baseUrl, registry } = ctx.state;
    const sources: Searchable<unknown>[] = [];
    if (scopes.includes('users')) {
      const withGroups = isReturned(registry.types.User, params.projection, 'groups');
      sources.push(
        users.searchableUsers(
          db,
          org.id,
          registry.types.User,
          baseUrl,
          scopes,
          withGroups,
          ctx.state.pages,
        ) as Searchable<unknown>,
      );
    }
    if (scopes.includes('groups') && org.groupSync) {
      const withMembers = isReturned(registry.types.Group, params.projection, 'members');
      sources.push(
        groups.searchableGroups(
          db,
          org.id,
          registry.types.Group,
          baseUrl,
          withMembers,
          scopes,
          ctx.state.pages,
        ) as Searchable<unknown>,
      );
    }
    if (sources.length === 0) {
      throw new ForbiddenError(
        scopes.includes('groups') ? GROUP_SYNC_DISABLED : 'This token cannot read Users or Groups',
        scopes.includes('groups') ? 'group_sync_disabled' : 'scope_missing',
      );
    }
    respond(ctx, 200, await searchAcross(sources, params));
  });
}
