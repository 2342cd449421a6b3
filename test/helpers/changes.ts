// Reading the change feed in tests, through the admin API as a consumer would.
import { expect } from 'vitest';
import type { Harness } from './harness.js';
import type { Json } from './scim.js';

/** Every change after `after` (all pages), optionally of one organization. */
export async function readAll(
  harness: Harness,
  query: { orgId?: string; after?: string; types?: string } = {},
): Promise<{ changes: Json[]; nextCursor: string }> {
  const changes: Json[] = [];
  let after = query.after;
  for (;;) {
    const params = new URLSearchParams({ limit: '1000' });
    if (after !== undefined) params.set('after', after);
    if (query.orgId) params.set('orgId', query.orgId);
    if (query.types) params.set('types', query.types);
    const res = await harness.admin('get', `/changes?${params}`);
    expect(res.status, res.text).toBe(200);
    changes.push(...res.body.changes);
    if (res.body.nextCursor === after) return { changes, nextCursor: res.body.nextCursor };
    after = res.body.nextCursor;
  }
}

/** The changes of one organization, as `type resourceId` lines with what else matters. */
export async function changesOf(harness: Harness, orgId: string, after?: string): Promise<Json[]> {
  return (await readAll(harness, { orgId, ...(after === undefined ? {} : { after }) })).changes;
}

/** The feed's cursor now: what a consumer starting after a resynchronisation reads after. */
export async function currentCursor(harness: Harness): Promise<string> {
  return (await readAll(harness)).nextCursor;
}
