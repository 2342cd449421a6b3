import { randomBytes } from 'node:crypto';
import type supertest from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { TOKEN_CACHE_TTL_MS } from '../../src/orgs/token-cache.js';
import { ADMIN_TOKEN, type Harness, PUBLIC_URL, type Tenant, useHarness } from '../helpers/harness.js';
import { expectScimError, SCIM_ERROR, SCIM_JSON, USER } from '../helpers/scim.js';

const UNKNOWN_ORG = '00000000-0000-4000-8000-000000000000';

let harness: Harness;
let a: Tenant;
let b: Tenant;
useHarness(async (h) => {
  harness = h;
  a = await harness.tenant();
  b = await harness.tenant();
});

const adminPost = (path: string, body: unknown) =>
  harness.http
    .post(`/admin/v1${path}`)
    .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
    .send(body as object);

/** Every authentication failure looks the same: 401, SCIM error, WWW-Authenticate: Bearer, no echo. */
function expectUnauthorized(res: supertest.Response, presented?: string) {
  expect(res.status).toBe(401);
  expect(res.headers['content-type']).toBe(SCIM_JSON);
  expect(res.headers['www-authenticate']).toMatch(/^Bearer\b/);
  expect(res.body).toEqual({ schemas: [SCIM_ERROR], status: '401', detail: expect.any(String) });
  expect(res.body.detail.trim().length).toBeGreaterThan(0);
  if (presented) {
    expect(res.body.detail).not.toContain(presented);
    expect(res.text).not.toContain(presented);
  }
}

function withAuth(req: supertest.Test, authorization: string | undefined) {
  return authorization === undefined ? req : req.set('Authorization', authorization);
}

async function usersNamed(userName: string) {
  return harness.database.db
    .selectFrom('users')
    .select(['org_id', 'id'])
    .where('user_name', '=', userName)
    .execute();
}

async function tokenIdOf(orgId: string, secret: string): Promise<string> {
  const res = await harness.http
    .get(`/admin/v1/orgs/${orgId}/tokens`)
    .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
    .expect(200);
  const token = res.body.tokens.find((t: { prefix: string }) => secret.startsWith(t.prefix));
  expect(token).toBeDefined();
  return token.id;
}

describe('valid tokens', () => {
  it("accepts each organization's own token under its own base URL", async () => {
    for (const t of [a, b]) {
      const res = await t.get('/Users').expect(200);
      expect(res.headers['content-type']).toBe(SCIM_JSON);
      expect(res.body.schemas).toEqual(['urn:ietf:params:scim:api:messages:2.0:ListResponse']);
    }
  });

  it('accepts the scheme name in any case (RFC 7235 §2.1)', async () => {
    await harness.http.get(`${a.basePath}/Users`).set('Authorization', `bearer ${a.token}`).expect(200);
    await harness.http.get(`${a.basePath}/Users`).set('Authorization', `BEARER ${a.token}`).expect(200);
  });
});

describe('401 for every credential that is not a valid token of this organization', () => {
  // [case, path under which it is presented, Authorization header, the credential that must not echo]
  const cases: [string, () => { base: string; authorization?: string; presented?: string }][] = [
    ['no Authorization header', () => ({ base: a.basePath })],
    ['an empty Authorization header', () => ({ base: a.basePath, authorization: '' })],
    [
      "'Authorization: non-token' (Okta SPEC step 11)",
      () => ({ base: a.basePath, authorization: 'non-token' }),
    ],
    [
      'the bare token without a scheme',
      () => ({ base: a.basePath, authorization: a.token, presented: a.token }),
    ],
    ['Bearer with no token', () => ({ base: a.basePath, authorization: 'Bearer ' })],
    [
      'Basic auth',
      () => {
        const basic = Buffer.from('okta-user:s3cret-passw0rd').toString('base64');
        return { base: a.basePath, authorization: `Basic ${basic}`, presented: basic };
      },
    ],
    [
      'Basic auth carrying a valid token',
      () => {
        const basic = Buffer.from(`${a.token}:`).toString('base64');
        return { base: a.basePath, authorization: `Basic ${basic}`, presented: basic };
      },
    ],
    [
      "a random 'scimd_' string",
      () => {
        const fake = `scimd_${randomBytes(32).toString('base64url')}`;
        return { base: a.basePath, authorization: `Bearer ${fake}`, presented: fake };
      },
    ],
    [
      'a valid token with its last character changed',
      () => {
        const last = a.token.at(-1) === 'A' ? 'B' : 'A';
        const forged = a.token.slice(0, -1) + last;
        return { base: a.basePath, authorization: `Bearer ${forged}`, presented: forged };
      },
    ],
    [
      'a valid token with extra characters appended',
      () => ({ base: a.basePath, authorization: `Bearer ${a.token}x`, presented: `${a.token}x` }),
    ],
    [
      "a gateway-style API key ('Bearer sk_live_abc123')",
      () => ({ base: a.basePath, authorization: 'Bearer sk_live_abc123', presented: 'sk_live_abc123' }),
    ],
    [
      'the admin token',
      () => ({ base: a.basePath, authorization: `Bearer ${ADMIN_TOKEN}`, presented: ADMIN_TOKEN }),
    ],
    [
      "organization A's token under organization B's base URL",
      () => ({ base: b.basePath, authorization: `Bearer ${a.token}`, presented: a.token }),
    ],
    [
      "organization B's token under organization A's base URL",
      () => ({ base: a.basePath, authorization: `Bearer ${b.token}`, presented: b.token }),
    ],
    [
      'a valid token under an unknown organization id',
      () => ({ base: `/scim/v2/${UNKNOWN_ORG}`, authorization: `Bearer ${a.token}`, presented: a.token }),
    ],
    [
      'two tokens in one header',
      () => ({ base: a.basePath, authorization: `Bearer ${a.token} ${b.token}`, presented: b.token }),
    ],
  ];

  it.each(cases)('%s', async (name, setup) => {
    const { base, authorization, presented } = setup();
    for (const path of ['/Users', '/ServiceProviderConfig', '/Schemas', '/ResourceTypes/User']) {
      const res = await withAuth(harness.http.get(base + path), authorization);
      expectUnauthorized(res, presented);
    }
    const userName = `intruder-${name.length}-${randomBytes(4).toString('hex')}@corp.example`;
    const res = await withAuth(harness.http.post(`${base}/Users`), authorization)
      .set('Content-Type', SCIM_JSON)
      .send({ schemas: [USER], userName });
    expectUnauthorized(res, presented);
    expect(await usersNamed(userName)).toEqual([]);
  });

  it('answers 404 saying what a base URL looks like when the path names no organization id', async () => {
    for (const path of [
      '/scim/v2/Users',
      '/scim/v2/acme/Users',
      '/scim/v2/not-a-uuid/Schemas',
      '/scim/v2',
      '/scim/v2/',
    ]) {
      for (const authorization of [`Bearer ${a.token}`, undefined]) {
        const res = await withAuth(harness.http.get(path), authorization);
        expectScimError(res, 404);
        expect(res.body.detail).toContain(`a SCIM base URL is ${PUBLIC_URL}/scim/v2/{organization id}`);
        expect(res.headers['www-authenticate']).toBeUndefined();
      }
    }
  });

  it('answers 401 before reading the body: malformed JSON without a token is 401, not 400', async () => {
    const res = await harness.http
      .post(`${a.basePath}/Users`)
      .set('Content-Type', SCIM_JSON)
      .send('{"userName": "half');
    expectUnauthorized(res);
    // The same body with the token is a 400, so the 401 above did not come from the body.
    const withToken = await harness.http
      .post(`${a.basePath}/Users`)
      .set('Authorization', `Bearer ${a.token}`)
      .set('Content-Type', SCIM_JSON)
      .send('{"userName": "half');
    expect(withToken.status).toBe(400);
  });

  it('answers 401 before checking the content type: text/plain without a token is 401, not 415', async () => {
    const res = await harness.http
      .post(`${a.basePath}/Users`)
      .set('Content-Type', 'text/plain')
      .send('userName=plain');
    expectUnauthorized(res);
  });
});

describe('expired and revoked tokens', () => {
  it('refuses a token once its expiresAt has passed, saying it expired', async () => {
    const expiresAt = new Date(Date.now() + 2000).toISOString();
    const secret = await harness.createToken(a.orgId, { expiresAt });
    await harness.http.get(`${a.basePath}/Users`).set('Authorization', `Bearer ${secret}`).expect(200);
    // The check just made is remembered (for TOKEN_CACHE_TTL_MS, longer than this move): expiry is
    // checked again on every use, remembered or not.
    harness.clock.advanceTo(expiresAt);
    const res = await harness.http.get(`${a.basePath}/Users`).set('Authorization', `Bearer ${secret}`);
    expectUnauthorized(res, secret);
    expect(res.body.detail).toMatch(/expired/i);
  });

  it('refuses a token whose expires_at was moved into the past behind scimd, once its remembered check lapses', async () => {
    const secret = await harness.createToken(a.orgId, {
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    await harness.http.get(`${a.basePath}/Users`).set('Authorization', `Bearer ${secret}`).expect(200);
    const id = await tokenIdOf(a.orgId, secret);
    // Straight into the table: no admin API call tells scimd, so only the cache's lifetime does.
    await harness.database.db
      .updateTable('scim_tokens')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', id)
      .execute();
    // Just past the remembered check's lifetime, and no further: it is the lapse that refuses it.
    harness.clock.advance(TOKEN_CACHE_TTL_MS + 1);
    for (const path of ['/Users', '/ServiceProviderConfig']) {
      const res = await harness.http.get(a.basePath + path).set('Authorization', `Bearer ${secret}`);
      expectUnauthorized(res, secret);
      expect(res.body.detail).toMatch(/expired/i);
    }
  });

  it('refuses a token revoked through the admin API on the very next request', async () => {
    const secret = await harness.createToken(a.orgId);
    await harness.http.get(`${a.basePath}/Users`).set('Authorization', `Bearer ${secret}`).expect(200);
    await adminPost(`/orgs/${a.orgId}/tokens/${await tokenIdOf(a.orgId, secret)}/revoke`, {}).expect(200);
    for (const path of ['/Users', '/ServiceProviderConfig']) {
      const res = await harness.http.get(a.basePath + path).set('Authorization', `Bearer ${secret}`);
      expectUnauthorized(res, secret);
      expect(res.body.detail).toMatch(/revoked/i);
    }
    // Other tokens of the organization keep working.
    await a.get('/Users').expect(200);
  });
});

describe('remembered token checks', () => {
  it('remembers a successful check and never a failed one', async () => {
    const org = await harness.tenant();
    harness.tokenChecks.invalidateOrg(org.orgId);
    const before = harness.tokenChecks.size;
    await org.get('/Users').expect(200);
    expect(harness.tokenChecks.size).toBe(before + 1);
    await harness.http.get(`${org.basePath}/Users`).set('Authorization', `Bearer ${org.token}x`).expect(401);
    expect(harness.tokenChecks.size).toBe(before + 1);
  });

  it('sees a rotation overlap on the next request: the old token expires when the overlap ends', async () => {
    const org = await harness.tenant();
    await org.get('/Users').expect(200);
    const id = await tokenIdOf(org.orgId, org.token);
    await adminPost(`/orgs/${org.orgId}/tokens/${id}/rotate`, { overlapSeconds: 1 }).expect(201);
    await org.get('/Users').expect(200);
    const { body } = await harness.admin('get', `/orgs/${org.orgId}/tokens`).expect(200);
    const { expiresAt } = body.tokens.find((t: { id: string }) => t.id === id);
    // The overlap's end, a second on; the check just made is remembered far longer than that.
    harness.clock.advanceTo(expiresAt);
    const res = await org.get('/Users');
    expectUnauthorized(res, org.token);
    expect(res.body.detail).toMatch(/expired/i);
  });

  it('sees group sync switched off on the next request', async () => {
    const org = await harness.createOrg({ name: 'Syncing', groupSync: true });
    const token = await harness.createToken(org.id);
    const groups = () => harness.http.get(`${org.basePath}/Groups`).set('Authorization', `Bearer ${token}`);
    await groups().expect(200);
    await harness.http
      .patch(`/admin/v1/orgs/${org.id}`)
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({ groupSync: false })
      .expect(200);
    await groups().expect(403);
  });

  it('refuses every token of a deleted organization on the next request', async () => {
    const org = await harness.tenant();
    await org.get('/Users').expect(200);
    await harness.http
      .delete(`/admin/v1/orgs/${org.orgId}`)
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .expect(204);
    expectUnauthorized(await org.get('/Users'), org.token);
  });
});

describe('scopes', () => {
  let usersOnly: string;
  let groupsOnly: string;
  let existingUserId: string;
  beforeAll(async () => {
    usersOnly = await harness.createToken(a.orgId, { scopes: ['users'] });
    groupsOnly = await harness.createToken(a.orgId, { scopes: ['groups'] });
    existingUserId = (
      await a.post('/Users', { schemas: [USER], userName: 'scoped@corp.example' }).expect(201)
    ).body.id;
  });

  const as = (secret: string, req: supertest.Test) => req.set('Authorization', `Bearer ${secret}`);

  it('lets a users-only token read and write Users', async () => {
    const list = await as(usersOnly, harness.http.get(`${a.basePath}/Users`)).expect(200);
    expect(list.body.totalResults).toBeGreaterThanOrEqual(1);
    const created = await as(usersOnly, harness.http.post(`${a.basePath}/Users`))
      .set('Content-Type', SCIM_JSON)
      .send({ schemas: [USER], userName: 'by-users-token@corp.example' })
      .expect(201);
    expect(created.body.userName).toBe('by-users-token@corp.example');
  });

  it.each([
    ['users-only', () => usersOnly],
    ['groups-only', () => groupsOnly],
  ])('serves discovery to a %s token', async (_, secret) => {
    for (const path of ['/ServiceProviderConfig', '/Schemas', '/ResourceTypes', '/ResourceTypes/User']) {
      const res = await as(secret(), harness.http.get(a.basePath + path));
      expect(res.status, path).toBe(200);
      expect(res.headers['content-type']).toBe(SCIM_JSON);
    }
  });

  function expectForbidden(res: supertest.Response) {
    expect(res.status).toBe(403);
    expect(res.headers['content-type']).toBe(SCIM_JSON);
    expect(res.body).toEqual({ schemas: [SCIM_ERROR], status: '403', detail: expect.any(String) });
    expect(res.body.detail).toMatch(/Users/);
    expect(res.text).not.toContain(groupsOnly);
  }

  it('refuses GET /Users to a groups-only token with 403', async () => {
    expectForbidden(await as(groupsOnly, harness.http.get(`${a.basePath}/Users`)));
  });

  it('refuses GET /Users/{id} to a groups-only token with 403', async () => {
    expectForbidden(await as(groupsOnly, harness.http.get(`${a.basePath}/Users/${existingUserId}`)));
  });

  it('refuses POST /Users to a groups-only token with 403 and creates nothing', async () => {
    const res = await as(groupsOnly, harness.http.post(`${a.basePath}/Users`))
      .set('Content-Type', SCIM_JSON)
      .send({ schemas: [USER], userName: 'by-groups-token@corp.example' });
    expectForbidden(res);
    expect(await usersNamed('by-groups-token@corp.example')).toEqual([]);
  });

  it('refuses PUT and DELETE /Users/{id} to a groups-only token with 403 and changes nothing', async () => {
    const before = (await a.get(`/Users/${existingUserId}`).expect(200)).body;
    expectForbidden(
      await as(groupsOnly, harness.http.put(`${a.basePath}/Users/${existingUserId}`))
        .set('Content-Type', SCIM_JSON)
        .send({ schemas: [USER], userName: 'renamed@corp.example' }),
    );
    expectForbidden(await as(groupsOnly, harness.http.delete(`${a.basePath}/Users/${existingUserId}`)));
    expect((await a.get(`/Users/${existingUserId}`).expect(200)).body).toEqual(before);
  });
});
