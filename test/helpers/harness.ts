// One app on one test database, driven through supertest without a port, plus helpers to create an
// organization and its tokens through the admin API (the way an administrator would).
import { pino } from 'pino';
import supertest from 'supertest';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { createApp } from '../../src/app.js';
import { ChangeFeed } from '../../src/changes/change-feed.js';
import type { Database } from '../../src/db/database.js';
import type { TokenChecks } from '../../src/orgs/scim-auth.js';
import { TOKEN_CACHE_TTL_MS, TokenCache } from '../../src/orgs/token-cache.js';
import { type DispatcherOptions, WebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { SecretBox } from '../../src/webhooks/secret-box.js';
import { TestClock } from './clock.js';
import { createTestDatabase } from './database.js';
import { SCIM_JSON } from './scim.js';

export const PUBLIC_URL = 'https://scim.test.example';
export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdefghij';

type AdminMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface Harness {
  database: Database;
  http: ReturnType<typeof supertest>;
  /** The app's request handler, for a test that needs a real server (a raw request, say). */
  callback: ReturnType<ReturnType<typeof createApp>['callback']>;
  /** An admin API request (`path` below /admin/v1) with the admin token. */
  admin(method: AdminMethod, path: string): supertest.Test;
  /** The app's remembered token checks (src/auth/token-cache.ts). */
  tokenChecks: TokenChecks;
  /**
   * The time SCIM token checks are made at and remembered checks age by: the wall clock until a test
   * moves it, and back to the wall clock after each test (useHarness).
   */
  clock: TestClock;
  /** The app's change feed, listening where the database allows it. */
  changes: ChangeFeed;
  /** The webhook dispatcher, when the harness was started with `webhooks`. */
  dispatcher: WebhookDispatcher | undefined;
  /** Creates an organization with the admin API; returns its id and base path. */
  createOrg(body?: Record<string, unknown>): Promise<{ id: string; basePath: string; scimBaseUrl: string }>;
  /** Creates a token with the admin API and returns its secret. */
  createToken(orgId: string, body?: Record<string, unknown>): Promise<string>;
  /** An org with a token of both scopes: the usual starting point of a SCIM test. */
  tenant(): Promise<Tenant>;
  /** The SCIM API of an existing organization with one of its tokens. */
  tenantOf(orgId: string, token: string): Promise<Tenant>;
  close(): Promise<void>;
}

export interface Tenant {
  orgId: string;
  basePath: string;
  baseUrl: string;
  token: string;
  get(path: string): supertest.Test;
  post(path: string, body?: unknown): supertest.Test;
  put(path: string, body?: unknown): supertest.Test;
  patch(path: string, body?: unknown): supertest.Test;
  delete(path: string): supertest.Test;
}

export interface HarnessOptions {
  readonly database?: Parameters<typeof createTestDatabase>[0];
  /**
   * Runs a webhook dispatcher (private targets allowed, short retries) with these options on top; and
   * without it, the admin API refuses private targets as production does.
   */
  readonly webhooks?: Partial<DispatcherOptions>;
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const database = await createTestDatabase(options.database);
  const clock = new TestClock();
  const tokenChecks: TokenChecks = new TokenCache(TOKEN_CACHE_TTL_MS, clock.performance);
  const logger = pino({ level: 'silent' });
  const changes = new ChangeFeed(database.db, { logger, schema: database.schema, listen: database.listen });
  await changes.start();
  const box = new SecretBox(ADMIN_TOKEN);
  const dispatcher = options.webhooks
    ? new WebhookDispatcher(database.db, changes, box, {
        timeoutMs: 2000,
        concurrency: 8,
        retryDelaysMs: [50, 100, 200],
        allowPrivate: true,
        logger,
        listen: database.listen,
        ...options.webhooks,
      })
    : undefined;
  dispatcher?.start();
  const app = createApp({
    database,
    publicUrl: PUBLIC_URL,
    adminToken: ADMIN_TOKEN,
    logger,
    tokenChecks,
    now: clock.date,
    changes,
    webhooks: { box, allowPrivate: dispatcher !== undefined, dispatcher },
  });
  const callback = app.callback();
  const http = supertest(callback);
  const admin = (method: AdminMethod, path: string) =>
    http[method](`/admin/v1${path}`).set('Authorization', `Bearer ${ADMIN_TOKEN}`);

  const harness: Harness = {
    database,
    http,
    callback,
    admin,
    tokenChecks,
    clock,
    changes,
    dispatcher,
    async createOrg(body = { name: 'Acme' }) {
      const res = await admin('post', '/orgs').send(body).expect(201);
      return { id: res.body.id, basePath: `/scim/v2/${res.body.id}`, scimBaseUrl: res.body.scimBaseUrl };
    },
    async createToken(orgId, body = {}) {
      const res = await admin('post', `/orgs/${orgId}/tokens`).send(body).expect(201);
      return res.body.token as string;
    },
    async tenant() {
      const org = await harness.createOrg();
      return harness.tenantOf(org.id, await harness.createToken(org.id));
    },
    async tenantOf(orgId, token) {
      const org = { id: orgId, basePath: `/scim/v2/${orgId}`, scimBaseUrl: `${PUBLIC_URL}/scim/v2/${orgId}` };
      const auth = (t: supertest.Test) => t.set('Authorization', `Bearer ${token}`);
      const send = (t: supertest.Test, body: unknown) =>
        body === undefined
          ? auth(t)
          : auth(t)
              .set('Content-Type', SCIM_JSON)
              .send(body as object);
      return {
        orgId: org.id,
        basePath: org.basePath,
        baseUrl: org.scimBaseUrl,
        token,
        get: (path) => auth(http.get(org.basePath + path)),
        post: (path, body) => send(http.post(org.basePath + path), body),
        put: (path, body) => send(http.put(org.basePath + path), body),
        patch: (path, body) => send(http.patch(org.basePath + path), body),
        delete: (path) => auth(http.delete(org.basePath + path)),
      };
    },
    close: async () => {
      await dispatcher?.stop();
      await changes.stop();
      await database.close();
    },
  };
  return harness;
}

/**
 * One harness per test file (a PGlite instance is expensive): started before the file's tests, given
 * to `ready` to set up what the tests share, and closed after them.
 */
export function useHarness(
  ready: (harness: Harness) => Promise<void> | void,
  options: HarnessOptions = {},
): void {
  let harness: Harness | undefined;
  beforeAll(async () => {
    harness = await startHarness(options);
    await ready(harness);
  });
  afterEach(() => harness?.clock.reset());
  afterAll(() => harness?.close());
}
