import type Router from '@koa/router';
import { ForbiddenError } from '../http/scim-errors.js';
import { respond, type ScimDeps, type ScimState } from '../http/scim-state.js';
import { GROUP_SYNC_DISABLED } from './groups.routes.js';
import * as groups from './groups.service.js';
import { listParamsFromSearchRequest } from './list-params.js';
import { isReturned } from './projection.js';
import { type Searchable, searchAcross } from './search.service.js';
import * as users from './users.service.js';

/**
 * POST /.search at the base URL searches every resource type the token may read: Users with the
 * users scope, Groups with the groups scope while group synchronization is on.
 */
export function registerRootSearch(router: Router<ScimState>, deps: ScimDeps): void {
  router.post('/.search', async (ctx) => {
    const params = listParamsFromSearchRequest(ctx.request.body);
    const { org, scopes, baseUrl } = ctx.state;
    const sources: Searchable<unknown>[] = [];
    if (scopes.includes('users')) {
      const withGroups = isReturned(users.userType, params.projection, 'groups');
      sources.push(users.searchableUsers(deps.db, org.id, baseUrl, withGroups) as Searchable<unknown>);
    }
    if (scopes.includes('groups') && org.groupSync) {
      const withMembers = isReturned(groups.groupType, params.projection, 'members');
      sources.push(groups.searchableGroups(deps.db, org.id, baseUrl, withMembers) as Searchable<unknown>);
    }
    if (sources.length === 0) {
      throw new ForbiddenError(
        scopes.includes('groups') ? GROUP_SYNC_DISABLED : 'This token cannot read Users or Groups',
      );
    }
    respond(ctx, 200, await searchAcross(sources, params));
  });
}
