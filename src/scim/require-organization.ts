// A SCIM path whose first segment is not an organization id (`/scim/v2/Users`, `/scim/v2/acme/Users`)
// is answered 404 saying what a base URL looks like, not 401 about a token.
import type { Middleware } from 'koa';
import { isUuid } from '../db/ids.js';
import { NotFoundError } from '../http/scim-errors.js';
import type { ScimState } from '../resources/scim-state.js';

export function requireOrganization(publicUrl: string): Middleware<ScimState> {
  return async (ctx, next) => {
    if (!isUuid(ctx.state.orgId)) {
      throw new NotFoundError(
        `No organization here: a SCIM base URL is ${publicUrl}/scim/v2/{organization id}, the organization's id a UUID (its scimBaseUrl in the admin API, the CLI and the console)`,
      );
    }
    await next();
  };
}
