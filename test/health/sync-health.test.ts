// Sync health over HTTP on a real database: each state from requests an IdP makes, the counts, and
// the failed-request log: what it keeps (method, path, status, scimType, detail, hint, request id)
// and what it never keeps (query strings, attribute and filter values, secrets).
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { SyncActivity } from '../../src/health/sync-activity.js';
import { orgHealth } from '../../src/health/sync-health.service.js';
import { type Harness, useHarness } from '../helpers/harness.js';
import { expectScimError, filterQuery, GROUP, type Json, patchOp, USER } from '../helpers/scim.js';

let harness: Harness;
useHarness((h) => {
  harness = h;
});

const health = async (orgId: string, query = ''): Promise<Json> =>
  (await harness.admin('get', `/orgs/${orgId}/health${query}`).expect(200)).body;

const user = (userName: string) => ({ schemas: [USER], userName, active: true });

describe('sync health', () => {
  it('is never_connected until the IdP’s first request, then healthy, with counts and people', async () => {
    const t = await harness.tenant();
    const before = await health(t.orgId);
    expect(before).toMatchObject({ orgId: t.orgId, state: 'never_connected', lastRequestAt: null });
    expect(before.tokens).toHaveLength(1);
    expect(before.tokens[0]).toMatchObject({ lastUsedAt: null, lastSuccessAt: null, expiresSoon: false });

    await t.get(`/Users?${filterQuery('userName eq "ada@example.com"')}`).expect(200);
    const id = (await t.post('/Users', user('ada@example.com')).expect(201)).body.id;
    await t.post('/Users', user('bob@example.com')).expect(201);
    await t.patch(`/Users/${id}`, patchOp({ op: 'replace', path: 'active', value: false })).expect(200);
    await t.get('/Users/00000000-0000-4000-8000-000000000000').expect(404);

    const after = await health(t.orgId);
    expect(after.state).toBe('healthy');
    expect(after.reasons).toEqual([]);
    expect(after.lastRequestAt).not.toBeNull();
    expect(after.lastSuccessAt).not.toBeNull();
    expect(after.tokens[0].lastUsedAt).not.toBeNull();
    expect(after.requests.lastHour).toEqual({
      'users.list': { success: 1 },
      'users.create': { success: 2 },
      'users.patch': { success: 1 },
      'users.get': { not_found: 1 },
    });
    expect(after.requests.lastDay).toEqual(after.requests.lastHour);
    expect(after.users).toEqual({ active: 1, inactive: 1, deprovisioned: 0 });
    expect(after.groups).toBe(0);
    // A 404 is in the log, without counting as the IdP failing.
    expect(after.recentFailures).toHaveLength(1);
    expect(after.recentFailures[0]).toMatchObject({
      method: 'GET',
      status: 404,
      path: expect.stringMatching(/^\/Users\//),
    });
  });

  it('is failing after failed requests in a row, each in the log with its hint and request id', async () => {
    const t = await harness.tenant();
    const id = (await t.post('/Users', user('first@example.com')).expect(201)).body.id;
    for (let i = 0; i < 5; i++) {
      const res = await t
        .patch(
          `/Users/${id}`,
          patchOp({ op: 'replace', path: 'urn:example:costCenter', value: 'CC-secret-value' }),
        )
        .set('X-Request-Id', `req-failing-${i}`);
      expectScimError(res, 400, 'invalidPath');
      expect(res.body.detail).toMatch(/\(request req-failing-\d\)$/);
    }
    const h = await health(t.orgId);
    expect(h.state).toBe('failing');
    expect(h.reasons[0]).toMatch(/last 5 requests failed/);
    const failure = h.recentFailures[0];
    expect(failure).toMatchObject({
      method: 'PATCH',
      status: 400,
      scimType: 'invalidPath',
      requestId: 'req-failing-4',
      tokenId: h.tokens[0].id,
      hint: expect.stringMatching(/schema lacks/),
    });
    expect(failure.path).toMatch(/^\/Users\/[0-9a-f-]{36}$/);
    expect(JSON.stringify(h)).not.toContain('CC-secret-value');
    expect(h.requests.lastHour['users.patch']).toEqual({ client_error: 5 });
  });

  it('keeps no query string, filter value, attribute value or secret in the log', async () => {
    const t = await harness.tenant();
    await t.get(`/Users?${filterQuery('userName eq "carol@private.example" bogus')}`).expect(400);
    await t.get(`/Users?${filterQuery('nickName eq "nick-private"')}`).expect(200);
    await t
      .post('/Users', {
        schemas: [USER],
        userName: 'dave@private.example',
        active: 'dave@private.example',
      })
      .expect(400);
    await t.post('/Users', user('erin@private.example')).expect(201);
    await t.post('/Users', user('erin@private.example')).expect(409);
    await harness.http
      .get(`${t.basePath}/Users?${filterQuery('userName eq "frank@private.example"')}`)
      .set('Authorization', 'Bearer scimd_not-a-real-token-with-a-secret-inside')
      .expect(401);

    const h = await health(t.orgId);
    const text = JSON.stringify(h);
    for (const value of ['private.example', 'nick-private', 'not-a-real-token', t.token, 'filter='])
      expect(text).not.toContain(value);
    const byStatus = Object.fromEntries(h.recentFailures.map((f: Json) => [f.status, f]));
    expect(byStatus[400].path).toBe('/Users');
    expect(byStatus[409]).toMatchObject({
      scimType: 'uniqueness',
      hint: expect.stringMatching(/already exists/),
    });
    expect(byStatus[401]).toMatchObject({ tokenId: null, hint: expect.stringMatching(/does not have/) });
    const filterFailure = h.recentFailures.find((f: Json) => f.scimType === 'invalidFilter');
    expect(filterFailure.detail).toContain('"…"');
  });

  it('keeps no unquoted value of a filter or a path, nor a path that is an address', async () => {
    const t = await harness.tenant();
    const id = (await t.post('/Users', user('grace@ok.example')).expect(201)).body.id;
    await t.get(`/Users?${filterQuery('emails[value eq alice@corp.example].x pr')}`).expect(400);
    await t.get(`/Users?${filterQuery('active eq 5550123')}`).expect(400);
    await t.get('/Users/carol@corp.example').expect(404);
    await t.get('/dave@corp.example/Users').expect(404);
    await t
      .patch(
        `/Users/${id}`,
        patchOp({ op: 'replace', path: 'emails[value eq erin@corp.example].x', value: 'y' }),
      )
      .expect(400);
    await t
      .patch(`/Users/${id}`, patchOp({ op: 'replace', path: 'frank@corp.example', value: 'y' }))
      .expect(400);
    await t.get(`/Users?sortBy=${encodeURIComponent('gina@corp.example')}`).expect(400);

    const h = await health(t.orgId);
    expect(h.recentFailures).toHaveLength(7);
    const text = JSON.stringify(h.recentFailures);
    for (const value of ['corp.example', 'alice', 'carol', 'dave', 'erin', 'frank', 'gina', '5550123'])
      expect(text).not.toContain(value);
    expect(h.recentFailures.map((f: Json) => f.path)).toEqual(
      expect.arrayContaining(['/Users/…', '/…/…', `/Users/${id}`]),
    );
    // The detail still says what was wrong, with the names of the schema.
    expect(h.recentFailures.map((f: Json) => f.detail).join('\n')).toMatch(/active is a boolean/);
  });

  it('shows credential trouble for an expired or revoked token, naming the token and what to do', async () => {
    const org = await harness.createOrg({ name: 'Credentials' });
    const expiring = await harness.admin('post', `/orgs/${org.id}/tokens`).send({ name: 'old' }).expect(201);
    await sql`update scim_tokens set expires_at = now() - interval '1 minute' where id = ${expiring.body.id}`.execute(
      harness.database.db,
    );
    const expired = await harness.tenantOf(org.id, expiring.body.token);
    await expired.get('/Users').expect(401);
    let h = await health(org.id);
    expect(h.state).toBe('credential_trouble');
    expect(h.recentFailures[0]).toMatchObject({
      status: 401,
      tokenId: expiring.body.id,
      hint: expect.stringMatching(/expired/),
    });

    const current = await harness.tenantOf(org.id, await harness.createToken(org.id));
    await current.get('/Users').expect(200);
    expect((await health(org.id)).state).toBe('healthy');

    const revokedToken = await harness.admin('post', `/orgs/${org.id}/tokens`).send({}).expect(201);
    await harness.admin('post', `/orgs/${org.id}/tokens/${revokedToken.body.id}/revoke`).send({}).expect(200);
    await (await harness.tenantOf(org.id, revokedToken.body.token)).get('/Users').expect(401);
    h = await health(org.id);
    expect(h.state).toBe('credential_trouble');
    expect(h.recentFailures[0]).toMatchObject({
      tokenId: revokedToken.body.id,
      hint: expect.stringMatching(/revoked/),
    });
  });

  it('is not credential trouble for a stray unknown token or missing header; a run of them with no success for a while is', async () => {
    const t = await harness.tenant();
    const stranger = await harness.tenant();
    await t.get('/Users').expect(200);
    await harness.http
      .get(`${t.basePath}/Users`)
      .set('Authorization', `Bearer ${stranger.token}`)
      .expect(401);
    await harness.http.get(`${t.basePath}/Users`).expect(401);
    const h = await health(t.orgId);
    expect(h.state).toBe('healthy');
    expect(h.recentFailures.map((f: Json) => [f.status, f.tokenId])).toEqual([
      [401, null],
      [401, null],
    ]);
    for (let n = 0; n < 3; n++)
      await harness.http.get(`${t.basePath}/Users`).set('Authorization', 'Bearer typo').expect(401);
    expect((await health(t.orgId)).state).toBe('healthy');
    // Five in a row, and no success for a quarter of an hour.
    const later = (minutes: number) =>
      orgHealth(harness.database.db, t.orgId, new Date(Date.now() + minutes * 60_000), {
        idleAfterMs: 86_400_000,
      });
    expect((await later(5)).state).toBe('healthy');
    const trouble = await later(16);
    expect(trouble.state).toBe('credential_trouble');
    expect(trouble.reasons[0]).toMatch(/last 5 requests came with a token this organization does not have/);
    await t.get('/Users').expect(200);
    expect((await health(t.orgId)).state).toBe('healthy');
  });

  it('is never_connected, not trouble, while refused requests alone have arrived; five of them are trouble', async () => {
    const org = await harness.createOrg({ name: 'Typo' });
    await harness.http.get(`/scim/v2/${org.id}/Users`).set('Authorization', 'Bearer scimd_typo').expect(401);
    let h = await health(org.id);
    expect(h.state).toBe('never_connected');
    expect(h.reasons[0]).toMatch(/none has come with a token of this organization yet/);
    for (let n = 0; n < 4; n++)
      await harness.http
        .get(`/scim/v2/${org.id}/Users`)
        .set('Authorization', 'Bearer scimd_typo')
        .expect(401);
    h = await health(org.id);
    expect(h.state).toBe('credential_trouble');
  });

  it('hints at group sync and scopes when the IdP pushes what the organization refuses', async () => {
    const org = await harness.createOrg({ name: 'No groups' });
    const t = await harness.tenantOf(org.id, await harness.createToken(org.id));
    await t.post('/Groups', { schemas: [GROUP], displayName: 'Everyone' }).expect(403);
    const usersOnly = await harness.tenantOf(
      org.id,
      await harness.createToken(org.id, { scopes: ['users'] }),
    );
    await harness.admin('patch', `/orgs/${org.id}`).send({ groupSync: true }).expect(200);
    await usersOnly.get('/Groups').expect(403);
    const hints = (await health(org.id)).recentFailures.map((f: Json) => f.hint);
    expect(hints).toEqual([
      expect.stringMatching(/lacks the scope/),
      expect.stringMatching(/Group sync is off/),
    ]);
  });

  it('gives Bulk, a missing token and an unknown token each a hint of its own', async () => {
    const t = await harness.tenant();
    await t
      .post('/Bulk', { schemas: ['urn:ietf:params:scim:api:messages:2.0:BulkRequest'], Operations: [] })
      .expect(501);
    await harness.http.get(`${t.basePath}/Users`).expect(401);
    await harness.http.get(`${t.basePath}/Users`).set('Authorization', 'Bearer scimd_unknown').expect(401);
    const hints = (await health(t.orgId)).recentFailures.map((f: Json) => [f.status, f.hint]);
    expect(hints).toEqual([
      [401, expect.stringMatching(/^The IdP sends a token this organization does not have/)],
      [401, expect.stringMatching(/^The IdP sent no token/)],
      [501, expect.stringMatching(/^The IdP asked for what this service does not offer \(Bulk, \/Me\)/)],
    ]);
  });

  it('is idle after SYNC_IDLE_HOURS without a request, and warns of a token about to expire', async () => {
    const org = await harness.createOrg({ name: 'Quiet' });
    const soon = new Date(Date.now() + 3 * 24 * 3_600_000).toISOString();
    const t = await harness.tenantOf(org.id, await harness.createToken(org.id, { expiresAt: soon }));
    await t.get('/ServiceProviderConfig').expect(200);
    const h = await health(org.id);
    expect(h.state).toBe('token_expiring');
    expect(h.tokens[0].expiresSoon).toBe(true);
    const later = await orgHealth(harness.database.db, org.id, new Date(Date.now() + 2 * 3_600_000), {
      idleAfterMs: 3_600_000,
    });
    expect(later.state).toBe('idle');
    expect(later.requests.lastHour).toEqual({});
    expect(later.requests.lastDay).toEqual({ 'discovery.read': { success: 1 } });
  });

  it('answers 404 for an unknown organization and 400 for a bad failures count', async () => {
    const t = await harness.tenant();
    await harness.admin('get', '/orgs/00000000-0000-4000-8000-000000000000/health').expect(404);
    await harness.admin('get', `/orgs/${t.orgId}/health?failures=1000`).expect(400);
    expect((await health(t.orgId, '?failures=0')).recentFailures).toEqual([]);
  });
});

describe('sync activity', () => {
  it('is written when the process stops, and counted once per request', async () => {
    const t = await harness.tenant();
    const activity = new SyncActivity(harness.database.db);
    for (let i = 0; i < 3; i++)
      activity.record({
        orgId: t.orgId,
        tokenId: null,
        operation: 'users.list',
        outcome: 'success',
        method: 'GET',
        path: '/Users',
        status: 200,
        requestId: `r${i}`,
        at: new Date(),
      });
    await activity.stop();
    const h = await health(t.orgId);
    expect(h.requests.lastHour).toEqual({ 'users.list': { success: 3 } });
  });

  it('keeps the newest 100 failed requests of an organization', async () => {
    const t = await harness.tenant();
    const activity = new SyncActivity(harness.database.db);
    for (let i = 0; i < 130; i++)
      activity.record({
        orgId: t.orgId,
        tokenId: null,
        operation: 'users.get',
        outcome: 'not_found',
        method: 'GET',
        path: `/Users/${i}`,
        status: 404,
        requestId: `r${i}`,
        at: new Date(Date.now() + i),
      });
    await activity.flush();
    const h = await health(t.orgId, '?failures=100');
    expect(h.recentFailures).toHaveLength(100);
    expect(h.recentFailures[0].requestId).toBe('r129');
    expect(h.recentFailures[99].requestId).toBe('r30');
    const { rows } = await sql<{
      n: number;
    }>`select count(*)::int as n from sync_failures where org_id = ${t.orgId}`.execute(harness.database.db);
    expect(rows[0]!.n).toBe(100);
  });
});

describe('request ids', () => {
  it('end every SCIM error detail and every admin error, as the X-Request-Id header and the log line have them', async () => {
    const t = await harness.tenant();
    const scim = await t.get('/Users/nope');
    expectScimError(scim, 404);
    expect(scim.body.detail).toMatch(new RegExp(`\\(request ${scim.headers['x-request-id']}\\)$`));
    const admin = await harness.admin('get', '/orgs/nope').expect(404);
    expect(admin.body.error.requestId).toBe(admin.headers['x-request-id']);
  });
});
