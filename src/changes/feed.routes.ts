// The admin API's change feed, read with the admin token or an API key, and the API keys themselves.
import type { Kysely } from 'kysely';
import type { Audited } from '../audit/audited-action.js';
import type { DB } from '../db/tables.js';
import type { Routes } from '../http/route-state.js';
import * as apiKeys from './api-keys.service.js';
import type { ChangeFeed } from './change-feed.js';
import { readChanges } from './feed.service.js';

export interface FeedRoutesDeps {
  readonly db: Kysely<DB>;
  readonly changes: ChangeFeed;
  readonly audited: Audited;
}

export function registerFeedRoutes(router: Routes, { db, changes, audited }: FeedRoutesDeps): void {
  router.get('/changes', async (ctx) => {
    // A long poll ends when its client goes away.
    const gone = new AbortController();
    ctx.res.once('close', () => gone.abort());
    ctx.body = await readChanges(db, changes, ctx.query, { signal: gone.signal, apiKey: ctx.state.apiKey });
    ctx.type = 'application/json';
  });
  router.post('/api-keys', audited('api_key.create', 'created'), async (ctx) => {
    ctx.status = 201;
    ctx.body = await apiKeys.createApiKey(db, ctx.request.body);
  });
  router.get('/api-keys', async (ctx) => {
    ctx.body = await apiKeys.listApiKeys(db);
  });
  router.post('/api-keys/:keyId/revoke', audited('api_key.revoke', 'keyId'), async (ctx) => {
    ctx.body = await apiKeys.revokeApiKey(db, changes, ctx.params.keyId!);
  });
}
