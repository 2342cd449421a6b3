// Each middleware of the SCIM chain (src/scim/scim-api.ts) on its own, in a Koa app of its own: what
// it establishes, what it answers, and what it leaves to the next one.
import { gzipSync } from 'node:zlib';
import Router from '@koa/router';
import Koa, { type Middleware } from 'koa';
import compose from 'koa-compose';
import { pino } from 'pino';
import supertest from 'supertest';
import { describe, expect, it } from 'vitest';
import { listAudit } from '../../src/audit/audit.repository.js';
import { AuditLog } from '../../src/audit/audit-log.js';
import { OrgRegistries } from '../../src/custom-schemas/org-registries.js';
import { InvalidFilterError, ServiceUnavailableError } from '../../src/http/scim-errors.js';
import { isScimPath } from '../../src/http/scim-path.js';
import type { Logger } from '../../src/log.js';
import type { TokenChecks } from '../../src/orgs/scim-auth.js';
import { TokenCache } from '../../src/orgs/token-cache.js';
import { PagePositions } from '../../src/resources/page-positions.js';
import { ResourceWrites } from '../../src/resources/resource-writes.js';
import type { ScimState } from '../../src/resources/scim-state.js';
import { recordAfterAnswer } from '../../src/scim/after-answer.js';
import { authenticate } from '../../src/scim/authenticate.js';
import { jsonBody } from '../../src/scim/json-body.js';
import { noRoute } from '../../src/scim/no-route.js';
import { renderScimErrors } from '../../src/scim/render-errors.js';
import { scimScope } from '../../src/scim/scope.js';
import { type Harness, PUBLIC_URL, useHarness } from '../helpers/harness.js';
import { SCIM_ERROR } from '../helpers/scim.js';

let harness: Harness;
useHarness((h) => {
  harness = h;
});

const ORG = '0b6f1c2e-8a4d-4f7e-9c3b-5d2a1e0f9b7c';

/** A Koa app running `middlewares` after setting the request id, as request-context.ts does. */
function appOf(...middlewares: Middleware<ScimState>[]) {
  const app = new Koa<ScimState>();
  app.silent = true;
  app.use(async (ctx, next) => {
    ctx.state.requestId = 'request-1';
    await next();
  });
  app.use(compose(middlewares));
  return supertest(app.callback());
}

/** Metrics and sync activity that keep nothing: these tests look at answers, the audit log and logs. */
const noMetrics = { databaseFailure() {}, scimOperation() {} };
const noActivity = { record() {} };

/** recordAfterAnswer writing the audit log to the test database, and `logger`'s lines. */
const afterAnswer = (logger: Logger) =>
  recordAfterAnswer({
    audit: new AuditLog(harness.database.db, logger),
    logger,
    changes: { written() {} },
    activity: noActivity,
    metrics: noMetrics,
  });

/** A logger whose lines are kept, parsed. */
function recordingLogger() {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

/** What the rest of the chain saw, answered as JSON. */
const echoState: Middleware<ScimState> = (ctx) => {
  const { orgId, baseUrl, write } = ctx.state;
  ctx.body = { path: ctx.path, orgId, baseUrl, write: write ?? null };
};

describe('scimScope', () => {
  function scoped(after?: (path: string) => void) {
    const shares: string[] = [];
    const database = {
      forOrg: (orgId: string) => {
        shares.push(orgId);
        return harness.database.forOrg(orgId);
      },
    };
    const restored: Middleware<ScimState> = async (ctx, next) => {
      await next();
      after?.(ctx.path);
    };
    return {
      http: appOf(
        restored,
        scimScope(database, PUBLIC_URL, { writes: new ResourceWrites(), pages: new PagePositions() }),
        echoState,
      ),
      shares,
    };
  }

  it('names the organization, its share, its base URL and the write, and shows the rest of the path', async () => {
    let pathAfter = '';
    const { http, shares } = scoped((path) => {
      pathAfter = path;
    });
    const upper = ORG.toUpperCase();
    const res = await http.delete(`/scim/v2/${upper}/Users/ABC`).expect(200);
    expect(res.body).toEqual({
      path: '/Users/ABC',
      orgId: upper,
      baseUrl: `${PUBLIC_URL}/scim/v2/${upper}`,
      write: { action: 'user.delete', resourceType: 'User', resourceId: 'ABC' },
    });
    // One share per organization whatever the case of its id; the outer middlewares see the full path.
    expect(shares).toEqual([ORG]);
    expect(pathAfter).toBe(`/scim/v2/${upper}/Users/ABC`);
  });

  it('shows the base URL itself as "/" and a search as no write', async () => {
    const { http } = scoped();
    expect((await http.get(`/scim/v2/${ORG}`).expect(200)).body).toMatchObject({ path: '/', write: null });
    expect((await http.post(`/scim/v2/${ORG}/Users/.search`).expect(200)).body.write).toBeNull();
  });

  it('gives a path that names no uuid the share of no organization', async () => {
    const { http, shares } = scoped();
    expect((await http.get('/scim/v2/acme/Users').expect(200)).body.orgId).toBe('acme');
    // %E0%A4%A does not decode: it names nothing at all.
    expect((await http.get('/scim/v2/%E0%A4%A/Users').expect(200)).body.orgId).toBe('');
    expect(shares).toEqual(['', '']);
  });

  it.each([
    ['/scim/v2/x', true],
    ['/SCIM/V2/x/Users', true],
    // Under the SCIM prefix without an organization: the surface answers it (404, saying what a base URL is).
    ['/scim/v2', true],
    ['/scim/v2/', true],
    ['/admin/v1/orgs', false],
  ])('isScimPath(%s) is %s', (path, expected) => {
    expect(isScimPath(path)).toBe(expected);
  });
});

describe('renderScimErrors', () => {
  function failing(error: unknown) {
    const { logger, lines } = recordingLogger();
    const http = appOf(renderScimErrors(logger, noMetrics), () => {
      throw error;
    });
    return { http, lines };
  }

  it('answers a SCIM error with its status, scimType and headers, as application/scim+json', async () => {
    const { http } = failing(new InvalidFilterError('bad filter'));
    const res = await http
      .get('/')
      .expect(400)
      .expect('Content-Type', /application\/scim\+json/);
    expect(res.body).toEqual({
      schemas: [SCIM_ERROR],
      status: '400',
      scimType: 'invalidFilter',
      detail: 'bad filter (request request-1)',
    });
    const unavailable = failing(new ServiceUnavailableError('down', 7));
    await unavailable.http.get('/').expect(503).expect('Retry-After', '7');
  });

  it('answers a database failure 503 with Retry-After and logs it as a warning', async () => {
    const lost = Object.assign(new Error('terminating connection due to administrator command'), {
      code: '57P01',
    });
    const { http, lines } = failing(lost);
    const res = await http.get('/').expect(503).expect('Retry-After', '5');
    expect(res.body.detail).toMatch(/database is unavailable/);
    expect(lines).toMatchObject([
      { level: 40, requestId: 'request-1', msg: 'database failure in SCIM request' },
    ]);
  });

  it('answers anything else 500 without echoing it, and logs it as an error', async () => {
    const { http, lines } = failing(new Error('secret internals'));
    const res = await http.get('/').expect(500);
    expect(res.body).toEqual({
      schemas: [SCIM_ERROR],
      status: '500',
      detail: 'The service provider failed to process the request (request request-1)',
    });
    expect(JSON.stringify(res.body)).not.toContain('secret internals');
    expect(lines).toMatchObject([
      { level: 50, requestId: 'request-1', err: { message: 'secret internals' } },
    ]);
  });

  it('leaves an answer that succeeded alone', async () => {
    const { logger } = recordingLogger();
    const http = appOf(renderScimErrors(logger, noMetrics), (ctx) => {
      ctx.status = 204;
    });
    await http.get('/').expect(204);
  });
});

describe('authenticate', () => {
  function authenticated() {
    const checks: TokenChecks = new TokenCache();
    const http = appOf(
      renderScimErrors(pino({ level: 'silent' }), noMetrics),
      scimScope(harness.database, PUBLIC_URL, { writes: new ResourceWrites(), pages: new PagePositions() }),
      authenticate(checks, new OrgRegistries()),
      (ctx) => {
        ctx.body = { org: ctx.state.org.id, tokenId: ctx.state.token.tokenId, scopes: ctx.state.scopes };
      },
    );
    return http;
  }

  it("sets the organization and the token's scopes for a token of the organization in the URL", async () => {
    const org = await harness.createOrg();
    const token = await harness.createToken(org.id, { scopes: ['users'] });
    const res = await authenticated()
      .get(`${org.basePath}/Users`)
      .set('Authorization', `Bearer ${token}`)
      .expect(200);
    expect(res.body).toEqual({ org: org.id, tokenId: expect.any(String), scopes: ['users'] });
  });

  it('answers 401 without a bearer token, with a token of another organization, and with a made-up one', async () => {
    const org = await harness.createOrg();
    const other = await harness.createOrg();
    const token = await harness.createToken(other.id);
    const http = authenticated();
    const missing = await http.get(`${org.basePath}/Users`).expect(401);
    expect(missing.body.detail).toMatch(/bearer token is required/);
    await http.get(`${org.basePath}/Users`).set('Authorization', `Bearer ${token}`).expect(401);
    await http.get(`${org.basePath}/Users`).set('Authorization', 'Bearer scimd_made-up').expect(401);
  });
});

describe('jsonBody and noRoute', () => {
  function routed() {
    const router = new Router<ScimState>({ sensitive: false, strict: false });
    router.get('/Users', (ctx) => {
      ctx.body = { listed: true };
    });
    router.post('/Users', (ctx) => {
      ctx.body = { received: ctx.request.body };
    });
    const baseUrl: Middleware<ScimState> = async (ctx, next) => {
      ctx.state.baseUrl = `${PUBLIC_URL}/scim/v2/${ORG}`;
      await next();
    };
    return appOf(
      renderScimErrors(pino({ level: 'silent' }), noMetrics),
      baseUrl,
      jsonBody(router),
      router.routes() as Middleware<ScimState>,
      noRoute(router),
    );
  }

  it('reads the JSON body of a route that takes it, with or without a Content-Type', async () => {
    const http = routed();
    const sent = { userName: 'ada' };
    const scim = await http
      .post('/Users')
      .set('Content-Type', 'application/scim+json')
      .send(JSON.stringify(sent));
    expect(scim.body).toEqual({ received: sent });
    const plain = await http
      .post('/Users')
      .send(Buffer.from(JSON.stringify(sent)))
      .unset('Content-Type');
    expect(plain.body).toEqual({ received: sent });
    const gzipped = await http
      .post('/Users')
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'gzip')
      // Sent as the bytes given: superagent's types say a serializer returns a string, but it writes a Buffer as is.
      .serialize((body: Buffer) => body as unknown as string)
      .send(gzipSync(JSON.stringify(sent)));
    expect(gzipped.body).toEqual({ received: sent });
  });

  it.each([
    ['text/plain', undefined, 'hello', 415, undefined],
    ['application/json', 'br', '{}', 415, undefined],
    ['application/json', 'gzip', 'not gzip', 400, 'invalidSyntax'],
    ['application/json', undefined, '{"userName": ', 400, 'invalidSyntax'],
    ['application/json', undefined, JSON.stringify({ big: 'x'.repeat(1_100_000) }), 413, undefined],
  ])('refuses a body of type %s, encoding %s', async (type, encoding, body, status, scimType) => {
    let request = routed().post('/Users').set('Content-Type', type);
    if (encoding) request = request.set('Content-Encoding', encoding);
    const res = await request
      .send(body)
      .expect(status)
      .expect('Content-Type', /application\/scim\+json/);
    expect(res.body.scimType).toBe(scimType);
  });

  it('answers an unknown path 404 before reading its body, naming the full URL', async () => {
    const res = await routed()
      .post('/Nowhere')
      .set('Content-Type', 'application/json')
      .send('{not json')
      .expect(404);
    expect(res.body.detail).toBe(
      `No SCIM endpoint at ${PUBLIC_URL}/scim/v2/${ORG}/Nowhere (request request-1)`,
    );
    await routed().get('/Nowhere').expect(404);
  });

  it('answers a method the path does not take 405, naming those it does', async () => {
    const http = routed();
    const put = await http.put('/Users').set('Content-Type', 'application/json').send('{}').expect(405);
    expect(put.body.detail).toBe('PUT is not allowed here; allowed: HEAD, GET, POST (request request-1)');
    await http.delete('/users/').expect(405);
  });
});

describe('recordAfterAnswer', () => {
  async function recorded(answer: Middleware<ScimState>) {
    const org = await harness.createOrg();
    const token = await harness.createToken(org.id);
    const { logger, lines } = recordingLogger();
    const http = appOf(
      scimScope(harness.database, PUBLIC_URL, { writes: new ResourceWrites(), pages: new PagePositions() }),
      afterAnswer(logger),
      renderScimErrors(logger, noMetrics),
      authenticate(new TokenCache() as TokenChecks, new OrgRegistries()),
      answer,
    );
    const entries = async () =>
      (await listAudit(harness.database.db, org.id, { limit: 10 })).events.filter((e) => e.actor !== 'admin');
    const tokens = async () => (await harness.admin('get', `/orgs/${org.id}/tokens`)).body.tokens;
    return { http, lines, entries, tokens, basePath: org.basePath, token: `Bearer ${token}` };
  }

  it('records a write that failed, with its status and its token', async () => {
    const t = await recorded(() => {
      throw new InvalidFilterError('no');
    });
    await t.http.post(`${t.basePath}/Users`).set('Authorization', t.token).expect(400);
    expect(await t.entries()).toMatchObject([
      { action: 'user.create', resourceType: 'User', status: 400, actor: expect.stringMatching(/^token:/) },
    ]);
  });

  it('records nothing for a write that succeeded: its entry committed with its change', async () => {
    const t = await recorded((ctx) => {
      ctx.status = 204;
    });
    await t.http.delete(`${t.basePath}/Users/x`).set('Authorization', t.token).expect(204);
    expect(await t.entries()).toEqual([]);
  });

  it("records nothing for a read but the token's use", async () => {
    const t = await recorded((ctx) => {
      ctx.body = {};
    });
    expect(await t.tokens()).toMatchObject([{ lastUsedAt: null, lastSuccessAt: null }]);
    await t.http.get(`${t.basePath}/Users`).set('Authorization', t.token).expect(200);
    expect(await t.entries()).toEqual([]);
    const [used] = await t.tokens();
    expect(used.lastSuccessAt).toEqual(used.lastUsedAt);
    expect(Date.parse(used.lastUsedAt)).toBeGreaterThan(Date.now() - 60_000);
  });

  it("logs a write the database failed before its token was checked, as the token's is unknown", async () => {
    const { logger, lines } = recordingLogger();
    const http = appOf(
      scimScope(harness.database, PUBLIC_URL, { writes: new ResourceWrites(), pages: new PagePositions() }),
      afterAnswer(logger),
      renderScimErrors(pino({ level: 'silent' }), noMetrics),
      () => {
        throw new ServiceUnavailableError('down', 5);
      },
    );
    await http.post(`/scim/v2/${ORG}/Groups`).expect(503);
    expect(lines).toMatchObject([
      {
        msg: 'could not write an audit entry',
        audit: { orgId: ORG, actor: 'unverified token', action: 'group.create', status: 503 },
      },
    ]);
  });
});
