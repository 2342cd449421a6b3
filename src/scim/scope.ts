// The first middleware of a SCIM request: the organization its URL names, that organization's share
// of the database pool (every query of the request runs in it), its base URL, the write the request
// makes, if any, and the process's batched writes and remembered page positions. The rest of the
// chain sees the path after the organization (`/Users/…`), as a mounted Koa app does: its router
// matches short paths, not the base URL once per route.
import type { Middleware } from 'koa';
import { scimWriteOf } from '../audit/audited-write.js';
import type { Database } from '../db/database.js';
import { isUuid } from '../db/ids.js';
import { splitScimPath } from '../http/scim-path.js';
import type { PagePositions } from '../resources/page-positions.js';
import type { ResourceWrites } from '../resources/resource-writes.js';
import type { ScimState } from '../resources/scim-state.js';

export function scimScope(
  database: Pick<Database, 'forOrg'>,
  publicUrl: string,
  machinery: { readonly writes: ResourceWrites; readonly pages: PagePositions },
): Middleware<ScimState> {
  return async (ctx, next) => {
    const path = ctx.path;
    const { organization: encoded, rest } = splitScimPath(path)!;
    // A path that does not decode names no organization: no token can belong to it.
    const orgId = safeDecode(encoded) ?? '';
    const state = ctx.state;
    state.orgId = orgId;
    // One share whatever the case of the id; a path that names no uuid never reaches the database.
    state.db = database.forOrg(isUuid(orgId) ? orgId.toLowerCase() : '');
    state.baseUrl = `${publicUrl}/scim/v2/${encodeURIComponent(orgId)}`;
    state.write = scimWriteOf(ctx.method, rest);
    state.writes = machinery.writes;
    state.pages = machinery.pages;
    ctx.path = rest || '/';
    try {
      await next();
    } finally {
      ctx.path = path;
    }
  };
}

function safeDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}
