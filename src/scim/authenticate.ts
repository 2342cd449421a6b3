// The organization's bearer token (auth/scim-auth.ts): 401 without one that belongs to it.
import type { Middleware } from 'koa';
import type { OrgRegistries } from '../custom-schemas/org-registries.js';
import { authenticateScimRequest, type TokenChecks } from '../orgs/scim-auth.js';
import type { ScimState } from '../resources/scim-state.js';

/**
 * Then the organization's registry: its own schemas beside the standard ones. `now` is the time a
 * token's expiry is checked against (tests give their own clock).
 */
export function authenticate(
  checks: TokenChecks,
  registries: OrgRegistries,
  now: () => Date = () => new Date(),
): Middleware<ScimState> {
  return async (ctx, next) => {
    const state = ctx.state;
    const token = await authenticateScimRequest(
      state.db,
      state.orgId,
      ctx.get('authorization'),
      now(),
      checks,
    );
    state.token = token;
    state.org = token.org;
    state.scopes = token.scopes;
    state.registry = await registries.of(state.db, token.org);
    await next();
  };
}
