// Lifecycles over HTTP on a real database (README, Behaviour): token
// rotation and its revocation guard, scope denials on writes, the three deprovisioning modes end to
// end (with the rows they leave behind), deleting an organization with all its data, and the audit
// log (what is recorded, what is not, no secret or attribute value, paging and filters).
import { randomUUID } from 'node:crypto';
import type supertest from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, type Harness, useHarness } from '../helpers/harness.js';
import {
  ENTERPRISE,
  expectAdminError,
  expectScimError,
  filterQuery,
  GROUP,
  patchOp,
  SCIM_JSON,
  SEARCH,
  USER,
} from '../helpers/scim.js';
import { sleep } from '../helpers/system.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

let harness: Harness;
useHarness((h) => {
  harness = h;
});

// biome-ignore lint/suspicious/noExplicitAny: response bodies are JSON
type Json = any;
type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

let seq = 0;
/** A name no other test uses. */
const unique = (prefix: string) => `${prefix}-${++seq}-${randomUUID().slice(0, 8)}`;

/** A SCIM request under an organization with the given token secret. */
function scim(secret: string, orgId: string, method: Method, path: string, body?: unknown): supertest.Test {
  const req = harness.http[method](`/scim/v2/${orgId}${path}`).set('Authorization', `Bearer ${secret}`);
  return body === undefined ? req : req.set('Content-Type', SCIM_JSON).send(body as object);
}

async function expectRefused(secret: string, orgId: string, reason: RegExp): Promise<void> {
  const res = await scim(secret, orgId, 'get', '/Users');
  expectScimError(res, 401);
  expect(res.headers['www-authenticate']).toMatch(/^Bearer\b/);
  expect(res.body.detail).toMatch(reason);
  expect(res.text).not.toContain(secret);
}

async function createOrg(body: Record<string, unknown> = { name: 'Lifecycle' }): Promise<Json> {
  return (await harness.admin('post', '/orgs').send(body).expect(201)).body;
}

async function patchOrg(orgId: string, body: Record<string, unknown>): Promise<Json> {
  const res = await harness.admin('patch', `/orgs/${orgId}`).send(body).expect(200);
  expect(res.body).toMatchObject(body);
  return res.body;
}

/** A token through the admin API: its view (id, …) and its secret. */
async function createToken(
  orgId: string,
  body: Record<string, unknown> = {},
): Promise<{ id: string; secret: string; view: Json }> {
  const res = await harness.admin('post', `/orgs/${orgId}/tokens`).send(body).expect(201);
  const { token: secret, ...view } = res.body;
  return { id: view.id, secret, view };
}

async function listTokens(orgId: string): Promise<Json[]> {
  return (await harness.admin('get', `/orgs/${orgId}/tokens`).expect(200)).body.tokens;
}

async function tokenView(orgId: string, id: string): Promise<Json> {
  const found = (await listTokens(orgId)).find((t) => t.id === id);
  expect(found, `token ${id}`).toBeDefined();
  return found;
}

const rotate = (orgId: string, tokenId: string, body?: Record<string, unknown>) => {
  const req = harness.admin('post', `/orgs/${orgId}/tokens/${tokenId}/rotate`);
  return body === undefined ? req : req.send(body);
};
const revoke = (orgId: string, tokenId: string, body?: Record<string, unknown>) => {
  const req = harness.admin('post', `/orgs/${orgId}/tokens/${tokenId}/revoke`);
  return body === undefined ? req : req.send(body);
};

/** An organization (group sync on when asked) with a token of both scopes. */
async function orgWithToken(
  body: Record<string, unknown> = { name: 'Lifecycle' },
): Promise<{ orgId: string; token: { id: string; secret: string } }> {
  const org = await createOrg(body);
  return { orgId: org.id, token: await createToken(org.id, { name: 'IdP' }) };
}

// ---------------------------------------------------------------------------------------------
describe('token rotation', () => {
  it('answers 201 with a new secret, replaces = the old id, the same name and scopes; the list links both', async () => {
    const org = await createOrg({ name: 'Rotate' });
    const old = await createToken(org.id, { name: 'Okta prod', scopes: ['users'] });
    const before = Date.now();
    const res = await rotate(org.id, old.id, {}).expect(201);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Okta prod',
      scopes: ['users'],
      prefix: expect.any(String),
      createdAt: expect.stringMatching(ISO),
      expiresAt: null,
      revokedAt: null,
      lastUsedAt: null,
      lastSuccessAt: null,
      replaces: old.id,
      replacedBy: null,
      token: expect.stringMatching(/^scimd_/),
    });
    expect(res.body.id).not.toBe(old.id);
    expect(res.body.token).not.toBe(old.secret);
    expect(res.body.token.startsWith(res.body.prefix)).toBe(true);
    expect(Date.parse(res.body.createdAt)).toBeGreaterThanOrEqual(before - 1000);

    const tokens = await listTokens(org.id);
    expect(tokens.map((t) => t.id)).toEqual([old.id, res.body.id]);
    const [oldView, newView] = tokens;
    // Without overlapSeconds the old token keeps its (absent) expiry: it works until revoked.
    expect(oldView).toEqual({ ...old.view, replacedBy: res.body.id });
    const { token: newSecret, ...newTokenView } = res.body;
    expect(newView).toEqual(newTokenView);
    const listing = JSON.stringify(tokens);
    expect(listing).not.toContain(newSecret);
    expect(listing).not.toContain(old.secret);
  });

  it('rotates a token with a body-less request', async () => {
    const org = await createOrg({ name: 'Rotate bare' });
    const old = await createToken(org.id);
    const res = await rotate(org.id, old.id).expect(201);
    expect(res.body.replaces).toBe(old.id);
  });

  it('lets both tokens work during the overlap, and the old one until it is revoked', async () => {
    const org = await createOrg({ name: 'Overlap' });
    const old = await createToken(org.id);
    const fresh = (await rotate(org.id, old.id, {}).expect(201)).body;
    for (let i = 0; i < 2; i++) {
      await scim(old.secret, org.id, 'get', '/Users').expect(200);
      await scim(fresh.token, org.id, 'get', '/Users').expect(200);
    }
    // Writes too, with either token.
    await scim(old.secret, org.id, 'post', '/Users', { schemas: [USER], userName: unique('old') }).expect(
      201,
    );
    await scim(fresh.token, org.id, 'post', '/Users', { schemas: [USER], userName: unique('new') }).expect(
      201,
    );
    expect((await tokenView(org.id, old.id)).expiresAt).toBeNull();
    await revoke(org.id, old.id, {}).expect(200);
    await expectRefused(old.secret, org.id, /revoked/i);
    await scim(fresh.token, org.id, 'get', '/Users').expect(200);
  });

  it('with overlapSeconds 1, expires the old token about a second later (in real time); the new one stays', async () => {
    const org = await createOrg({ name: 'Short overlap' });
    const old = await createToken(org.id);
    const before = Date.now();
    const fresh = (await rotate(org.id, old.id, { overlapSeconds: 1 }).expect(201)).body;
    const after = Date.now();
    expect(fresh.expiresAt).toBeNull();
    const oldView = await tokenView(org.id, old.id);
    expect(oldView.replacedBy).toBe(fresh.id);
    const expiresAt = Date.parse(oldView.expiresAt);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 1000 - 5);
    expect(expiresAt).toBeLessThanOrEqual(after + 1000 + 5);
    // Real time, not a moved clock: the 1 s window is what the request asked for.
    await sleep(Math.max(0, expiresAt - Date.now()) + 200);
    await expectRefused(old.secret, org.id, /expired/i);
    await scim(fresh.token, org.id, 'get', '/Users').expect(200);
  });

  it('sets the old token to expire at now + overlapSeconds, never later than it already expired', async () => {
    const org = await createOrg({ name: 'Overlap bounds' });
    const hour = Date.now() + 3_600_000;
    const a = await createToken(org.id, { expiresAt: new Date(hour).toISOString() });
    const before = Date.now();
    await rotate(org.id, a.id, { overlapSeconds: 60 }).expect(201);
    const after = Date.now();
    const aExpires = Date.parse((await tokenView(org.id, a.id)).expiresAt);
    expect(aExpires).toBeGreaterThanOrEqual(before + 60_000 - 5);
    expect(aExpires).toBeLessThanOrEqual(after + 60_000 + 5);

    const b = await createToken(org.id, { expiresAt: new Date(hour).toISOString() });
    await rotate(org.id, b.id, { overlapSeconds: 7200 }).expect(201);
    expect((await tokenView(org.id, b.id)).expiresAt).toBe(b.view.expiresAt);
  });

  it('gives the replacement of a token with expiresAt the same lifetime', async () => {
    const org = await createOrg({ name: 'Lifetime' });
    const lifetime = 3 * 86_400_000;
    const old = await createToken(org.id, { expiresAt: new Date(Date.now() + lifetime).toISOString() });
    const oldLifetime = Date.parse(old.view.expiresAt) - Date.parse(old.view.createdAt);
    await sleep(20);
    const fresh = (await rotate(org.id, old.id, {}).expect(201)).body;
    expect(fresh.expiresAt).toMatch(ISO);
    expect(Date.parse(fresh.expiresAt) - Date.parse(fresh.createdAt)).toBe(oldLifetime);
    expect(Date.parse(fresh.expiresAt)).toBeGreaterThan(Date.parse(old.view.expiresAt));
    // The old token keeps its own expiry when no overlap is asked.
    expect((await tokenView(org.id, old.id)).expiresAt).toBe(old.view.expiresAt);
    await scim(fresh.token, org.id, 'get', '/Users').expect(200);
  });

  it('rotates the replacement in turn (a chain), keeping name and scopes', async () => {
    const org = await createOrg({ name: 'Chain' });
    const first = await createToken(org.id, { name: 'Entra', scopes: ['groups'] });
    const second = (await rotate(org.id, first.id, {}).expect(201)).body;
    const third = (await rotate(org.id, second.id, {}).expect(201)).body;
    expect(third).toMatchObject({ name: 'Entra', scopes: ['groups'], replaces: second.id });
    const views = await listTokens(org.id);
    expect(views.map((t) => [t.id, t.replaces, t.replacedBy])).toEqual([
      [first.id, null, second.id],
      [second.id, first.id, third.id],
      [third.id, second.id, null],
    ]);
  });

  describe('409 conflict, creating nothing', () => {
    async function expectConflict(orgId: string, tokenId: string, message: RegExp) {
      const before = await listTokens(orgId);
      const res = await rotate(orgId, tokenId, {});
      expectAdminError(res, 409, 'conflict');
      expect(res.body.error.message).toMatch(message);
      expect(await listTokens(orgId)).toEqual(before);
    }

    it('for a revoked token', async () => {
      const org = await createOrg({ name: 'Rotate revoked' });
      const t = await createToken(org.id);
      await revoke(org.id, t.id, {}).expect(200);
      await expectConflict(org.id, t.id, /revoked/i);
    });

    it('for an expired token', async () => {
      const org = await createOrg({ name: 'Rotate expired' });
      const t = await createToken(org.id, { expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
      // The API refuses an expiresAt in the past, and a real expiry is already proven above and in
      // auth.test.ts; moving expires_at into the past stands for the passing of time.
      await harness.database.db
        .updateTable('scim_tokens')
        .set({ expires_at: new Date(Date.now() - 1000) })
        .where('org_id', '=', org.id)
        .where('id', '=', t.id)
        .execute();
      await expectRefused(t.secret, org.id, /expired/i);
      await expectConflict(org.id, t.id, /expired/i);
    });

    it('for a token already rotated, naming its replacement', async () => {
      const org = await createOrg({ name: 'Rotate twice' });
      const t = await createToken(org.id);
      const fresh = (await rotate(org.id, t.id, {}).expect(201)).body;
      await expectConflict(org.id, t.id, new RegExp(fresh.id));
    });

    it('for two concurrent rotations of one token: one wins, the other is 409', async () => {
      const org = await createOrg({ name: 'Rotate race' });
      const t = await createToken(org.id);
      const results = await Promise.all([rotate(org.id, t.id, {}), rotate(org.id, t.id, {})]);
      expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
      const views = await listTokens(org.id);
      expect(views).toHaveLength(2);
      const winner = results.find((r) => r.status === 201)!.body;
      expect(views.find((v) => v.id === t.id).replacedBy).toBe(winner.id);
    });
  });

  it.each([
    ['an unknown token id', () => UNKNOWN_ID],
    ['a non-uuid token id', () => 'not-a-uuid'],
  ])('answers 404 not_found for %s', async (_, id) => {
    const org = await createOrg({ name: 'Rotate 404' });
    expectAdminError(await rotate(org.id, id(), {}), 404, 'not_found');
  });

  it('answers 404 not_found for a token of another organization, and for an unknown organization', async () => {
    const org = await createOrg({ name: 'Rotate mine' });
    const other = await createOrg({ name: 'Rotate theirs' });
    const theirs = await createToken(other.id);
    expectAdminError(await rotate(org.id, theirs.id, {}), 404, 'not_found');
    expectAdminError(await rotate(UNKNOWN_ID, theirs.id, {}), 404, 'not_found');
    expect((await tokenView(other.id, theirs.id)).replacedBy).toBeNull();
  });

  it.each<[string, unknown]>([
    ['overlapSeconds -1', { overlapSeconds: -1 }],
    ['overlapSeconds "x"', { overlapSeconds: 'x' }],
    ['overlapSeconds "60" (a string)', { overlapSeconds: '60' }],
    ['overlapSeconds 1.5', { overlapSeconds: 1.5 }],
    ['an unknown field', { overlapSeconds: 60, force: true }],
    ['an array body', [{ overlapSeconds: 60 }]],
  ])('answers 400 invalid_request for %s and rotates nothing', async (_, body) => {
    const org = await createOrg({ name: 'Rotate 400' });
    const t = await createToken(org.id);
    const res = await harness.admin('post', `/orgs/${org.id}/tokens/${t.id}/rotate`).send(body as object);
    expectAdminError(res, 400, 'invalid_request');
    expect(await listTokens(org.id)).toEqual([t.view]);
  });
});

// ---------------------------------------------------------------------------------------------
describe('revocation and its guard after a rotation', () => {
  it('refuses to revoke the old token until the new one has served a successful request', async () => {
    const org = await createOrg({ name: 'Guard' });
    const old = await createToken(org.id, { name: 'Okta' });
    await scim(old.secret, org.id, 'get', '/Users').expect(200);
    const fresh = (await rotate(org.id, old.id, {}).expect(201)).body;

    // Right after the rotation: 409, naming the replacement; nothing changes.
    const refused = await revoke(org.id, old.id, {});
    expectAdminError(refused, 409, 'conflict');
    expect(refused.body.error.message).toContain(fresh.id);
    expect((await tokenView(org.id, old.id)).revokedAt).toBeNull();
    await scim(old.secret, org.id, 'get', '/Users').expect(200);

    // Failed requests with the new token do not lift the guard: a 404, a 400, a 409.
    await scim(fresh.token, org.id, 'get', `/Users/${randomUUID()}`).expect(404);
    await scim(fresh.token, org.id, 'get', `/Users?${filterQuery('userName eq')}`).expect(400);
    await scim(fresh.token, org.id, 'post', '/Users', { schemas: [USER] }).expect(400);
    const used = await tokenView(org.id, fresh.id);
    expect(used.lastUsedAt).toMatch(ISO);
    expect(used.lastSuccessAt).toBeNull();
    expectAdminError(await revoke(org.id, old.id, {}), 409, 'conflict');
    // Nor does another success of the OLD token.
    await scim(old.secret, org.id, 'get', '/Users').expect(200);
    expectAdminError(await revoke(org.id, old.id), 409, 'conflict');

    // One successful request with the new token lifts it.
    const beforeSuccess = Date.now();
    await scim(fresh.token, org.id, 'get', '/Users').expect(200);
    const served = await tokenView(org.id, fresh.id);
    expect(served.lastSuccessAt).toMatch(ISO);
    expect(Date.parse(served.lastSuccessAt)).toBeGreaterThanOrEqual(beforeSuccess - 1000);
    expect(served.lastUsedAt).toMatch(ISO);

    const beforeRevoke = Date.now();
    const revoked = await revoke(org.id, old.id, {}).expect(200);
    expect(revoked.headers['content-type']).toMatch(/^application\/json/);
    const oldView = await tokenView(org.id, old.id);
    expect(revoked.body).toEqual(oldView);
    expect(revoked.body).not.toHaveProperty('token');
    expect(revoked.body.revokedAt).toMatch(ISO);
    expect(Date.parse(revoked.body.revokedAt)).toBeGreaterThanOrEqual(beforeRevoke - 1000);
    expect(Date.parse(revoked.body.revokedAt)).toBeLessThanOrEqual(Date.now() + 1000);
    expect(revoked.body.replacedBy).toBe(fresh.id);

    await expectRefused(old.secret, org.id, /revoked/i);
    await scim(fresh.token, org.id, 'get', '/Users').expect(200);

    // Revoking again is idempotent: 200, revokedAt unchanged.
    await sleep(10);
    const again = await revoke(org.id, old.id, {}).expect(200);
    expect(again.body.revokedAt).toBe(revoked.body.revokedAt);
    expect(await tokenView(org.id, old.id)).toEqual(oldView);
  });

  it('counts a successful write by the new token as well (POST /Users 201)', async () => {
    const org = await createOrg({ name: 'Guard write' });
    const old = await createToken(org.id);
    const fresh = (await rotate(org.id, old.id, {}).expect(201)).body;
    await scim(fresh.token, org.id, 'post', '/Users', { schemas: [USER], userName: unique('w') }).expect(201);
    await revoke(org.id, old.id, {}).expect(200);
  });

  it('counts a 403 by the new token as a failure (scope denial does not lift the guard)', async () => {
    const org = await createOrg({ name: 'Guard 403' });
    const old = await createToken(org.id, { scopes: ['groups'] });
    const fresh = (await rotate(org.id, old.id, {}).expect(201)).body;
    await scim(fresh.token, org.id, 'get', '/Users').expect(403);
    expectAdminError(await revoke(org.id, old.id, {}), 409, 'conflict');
  });

  it('revokes at once with force: true, before the new token was ever used', async () => {
    const org = await createOrg({ name: 'Force' });
    const old = await createToken(org.id);
    const fresh = (await rotate(org.id, old.id, {}).expect(201)).body;
    const res = await revoke(org.id, old.id, { force: true }).expect(200);
    expect(res.body.revokedAt).toMatch(ISO);
    await expectRefused(old.secret, org.id, /revoked/i);
    await scim(fresh.token, org.id, 'get', '/Users').expect(200);
    // force: false is the default behaviour.
    const other = await createToken(org.id);
    await rotate(org.id, other.id, {}).expect(201);
    expectAdminError(await revoke(org.id, other.id, { force: false }), 409, 'conflict');
  });

  it('revokes a plain (never rotated) token at once, with or without a body', async () => {
    const org = await createOrg({ name: 'Plain' });
    const a = await createToken(org.id);
    const b = await createToken(org.id);
    await scim(a.secret, org.id, 'get', '/Users').expect(200);
    const res = await revoke(org.id, a.id, {}).expect(200);
    expect(res.body).toMatchObject({ id: a.id, revokedAt: expect.stringMatching(ISO), replacedBy: null });
    await expectRefused(a.secret, org.id, /revoked/i);
    await revoke(org.id, b.id).expect(200);
    await expectRefused(b.secret, org.id, /revoked/i);
  });

  it('lets the replacement keep working when the new token is revoked instead of the old', async () => {
    const org = await createOrg({ name: 'Revoke new' });
    const old = await createToken(org.id);
    const fresh = (await rotate(org.id, old.id, {}).expect(201)).body;
    // The replacement itself was never replaced: it revokes at once.
    await revoke(org.id, fresh.id, {}).expect(200);
    await expectRefused(fresh.token, org.id, /revoked/i);
    await scim(old.secret, org.id, 'get', '/Users').expect(200);
  });

  it('shows lastUsedAt and lastSuccessAt in GET tokens after use', async () => {
    const org = await createOrg({ name: 'Usage' });
    const t = await createToken(org.id);
    expect(await tokenView(org.id, t.id)).toMatchObject({ lastUsedAt: null, lastSuccessAt: null });
    const before = Date.now();
    await scim(t.secret, org.id, 'get', `/Users/${randomUUID()}`).expect(404);
    const failed = await tokenView(org.id, t.id);
    expect(failed.lastUsedAt).toMatch(ISO);
    expect(Date.parse(failed.lastUsedAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(failed.lastSuccessAt).toBeNull();
    await scim(t.secret, org.id, 'get', '/ServiceProviderConfig').expect(200);
    const ok = await tokenView(org.id, t.id);
    expect(ok.lastSuccessAt).toMatch(ISO);
    expect(Date.parse(ok.lastSuccessAt)).toBeGreaterThanOrEqual(Date.parse(ok.lastUsedAt));
  });

  it.each<[string, unknown]>([
    ['force "yes"', { force: 'yes' }],
    ['an unknown field', { force: true, overlapSeconds: 1 }],
  ])('answers 400 invalid_request for %s and revokes nothing', async (_, body) => {
    const org = await createOrg({ name: 'Revoke 400' });
    const t = await createToken(org.id);
    expectAdminError(await revoke(org.id, t.id, body as Record<string, unknown>), 400, 'invalid_request');
    expect((await tokenView(org.id, t.id)).revokedAt).toBeNull();
    await scim(t.secret, org.id, 'get', '/Users').expect(200);
  });

  it('answers 404 not_found for an unknown token and an unknown organization', async () => {
    const org = await createOrg({ name: 'Revoke 404' });
    const t = await createToken(org.id);
    expectAdminError(await revoke(org.id, UNKNOWN_ID, {}), 404, 'not_found');
    expectAdminError(await revoke(org.id, 'nope', {}), 404, 'not_found');
    expectAdminError(await revoke(UNKNOWN_ID, t.id, {}), 404, 'not_found');
  });
});

// ---------------------------------------------------------------------------------------------
describe('scope denials on writes', () => {
  let orgId: string;
  let both: string;
  let usersOnly: string;
  let groupsOnly: string;
  let user: Json;
  let group: Json;

  beforeAll(async () => {
    const o = await orgWithToken({ name: 'Scopes', groupSync: true });
    orgId = o.orgId;
    both = o.token.secret;
    usersOnly = (await createToken(orgId, { scopes: ['users'] })).secret;
    groupsOnly = (await createToken(orgId, { scopes: ['groups'] })).secret;
    user = (
      await scim(both, orgId, 'post', '/Users', { schemas: [USER], userName: 'scoped.writer@corp.example' })
    ).body;
    group = (
      await scim(both, orgId, 'post', '/Groups', {
        schemas: [GROUP],
        displayName: 'Scoped group',
        members: [{ value: user.id }],
      })
    ).body;
    expect(user.id).toMatch(UUID);
    expect(group.id).toMatch(UUID);
    // As read back now: with its group.
    user = (await scim(both, orgId, 'get', `/Users/${user.id}`).expect(200)).body;
    expect(user.groups).toHaveLength(1);
  });

  const writes = (type: 'Users' | 'Groups') => {
    const body =
      type === 'Users'
        ? { schemas: [USER], userName: 'refused.writer@corp.example' }
        : { schemas: [GROUP], displayName: 'Refused group' };
    const replace = type === 'Users' ? 'userName' : 'displayName';
    return [
      ['POST', 'post', `/${type}`, body],
      ['PUT', 'put', `/${type}/:id`, body],
      ['PATCH', 'patch', `/${type}/:id`, patchOp({ op: 'replace', path: replace, value: 'refused' })],
      ['DELETE', 'delete', `/${type}/:id`, undefined],
    ] as const;
  };

  it.each(writes('Groups'))('refuses %s /Groups to a users-only token with 403', async (_, m, path, body) => {
    const res = await scim(usersOnly, orgId, m, path.replace(':id', group.id), body);
    expectScimError(res, 403);
    expect(res.body.detail).toMatch(/Groups/);
    expect(res.text).not.toContain(usersOnly);
    const after = (await scim(both, orgId, 'get', `/Groups/${group.id}`).expect(200)).body;
    expect(after).toEqual(group);
    const refused = await scim(
      both,
      orgId,
      'get',
      `/Groups?${filterQuery('displayName eq "Refused group"')}`,
    );
    expect(refused.body.totalResults).toBe(0);
  });

  it.each(writes('Users'))('refuses %s /Users to a groups-only token with 403', async (_, m, path, body) => {
    const res = await scim(groupsOnly, orgId, m, path.replace(':id', user.id), body);
    expectScimError(res, 403);
    expect(res.body.detail).toMatch(/Users/);
    expect(res.text).not.toContain(groupsOnly);
    const after = (await scim(both, orgId, 'get', `/Users/${user.id}`).expect(200)).body;
    expect(after).toEqual(user);
    const refused = await scim(
      both,
      orgId,
      'get',
      `/Users?${filterQuery('userName eq "refused.writer@corp.example"')}`,
    );
    expect(refused.body.totalResults).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------
describe('deprovisioning (DELETE /Users/{id}) in each mode', () => {
  const PERSONAL = ['Dana', 'Fox', 'dana.fox', '555-0100', 'ext-dana', 'E-1001', 'mgr-77', 'Research'];

  const person = (userName: string, externalId: string) => ({
    schemas: [USER, ENTERPRISE],
    userName,
    externalId,
    displayName: 'Dana Fox',
    name: { givenName: 'Dana', familyName: 'Fox', formatted: 'Dana Fox' },
    emails: [{ value: 'dana.fox@corp.example', type: 'work', primary: true }],
    phoneNumbers: [{ value: '+1 555-0100', type: 'work' }],
    title: 'Researcher',
    active: true,
    [ENTERPRISE]: { employeeNumber: 'E-1001', department: 'Research', manager: { value: 'mgr-77' } },
  });

  async function userRow(orgId: string, id: string) {
    return harness.database.db
      .selectFrom('users')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  async function membershipRows(orgId: string, userId: string) {
    return harness.database.db
      .selectFrom('group_members')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('user_id', '=', userId)
      .execute();
  }

  describe.each(['deactivate', 'anonymize', 'delete'] as const)('%s', (mode) => {
    let orgId: string;
    let secret: string;
    const call = (m: Method, path: string, body?: unknown) => scim(secret, orgId, m, path, body);
    const userName = `Dana.Fox.${mode}@corp.example`;
    const externalId = `ext-dana-${mode}`;
    let gone: Json;
    let stays: Json;
    let group: Json;

    beforeAll(async () => {
      const o = await orgWithToken({ name: `Deprovision ${mode}`, groupSync: true });
      orgId = o.orgId;
      secret = o.token.secret;
      await patchOrg(orgId, { deprovisioning: mode });
      gone = (await call('post', '/Users', person(userName, externalId)).expect(201)).body;
      stays = (
        await call('post', '/Users', { schemas: [USER], userName: `stays.${mode}@corp.example` }).expect(201)
      ).body;
      group = (
        await call('post', '/Groups', {
          schemas: [GROUP],
          displayName: `Team ${mode}`,
          members: [{ value: gone.id }, { value: stays.id }],
        }).expect(201)
      ).body;
      expect(group.members).toHaveLength(2);
      const res = await call('delete', `/Users/${gone.id}`).expect(204);
      expect(res.text).toBe('');
    });

    it('answers 404 to GET, PUT, PATCH and DELETE of the id afterwards', async () => {
      expectScimError(await call('get', `/Users/${gone.id}`), 404);
      expectScimError(await call('put', `/Users/${gone.id}`, person(userName, externalId)), 404);
      expectScimError(
        await call('patch', `/Users/${gone.id}`, patchOp({ op: 'replace', path: 'active', value: true })),
        404,
      );
      expectScimError(await call('delete', `/Users/${gone.id}`), 404);
    });

    it('shows it in no list, filter or search', async () => {
      const all = (await call('get', '/Users?count=1000').expect(200)).body;
      const ids = all.Resources.map((u: Json) => u.id);
      expect(ids).toContain(stays.id);
      expect(ids).not.toContain(gone.id);
      expect(all.totalResults).toBe(ids.length);
      for (const filter of [
        `userName eq "${userName}"`,
        `id eq "${gone.id}"`,
        `externalId eq "${externalId}"`,
        'emails.value eq "dana.fox@corp.example"',
        'emails[type eq "work" and value eq "dana.fox@corp.example"]',
        'name.familyName eq "Fox"',
        'active eq false',
        `${ENTERPRISE}:employeeNumber eq "E-1001"`,
      ]) {
        const res = (await call('get', `/Users?${filterQuery(filter)}`).expect(200)).body;
        expect(res.totalResults, filter).toBe(0);
      }
      const searched = (
        await call('post', '/Users/.search', { schemas: [SEARCH], filter: 'userName sw "Dana"' }).expect(200)
      ).body;
      expect(searched.totalResults).toBe(0);
      const root = (await call('post', '/.search', { schemas: [SEARCH] }).expect(200)).body;
      expect(root.Resources.map((r: Json) => r.id)).not.toContain(gone.id);
    });

    it('takes it out of its group; members[value eq id] finds nothing; the other member stays', async () => {
      const after = (await call('get', `/Groups/${group.id}`).expect(200)).body;
      expect(after.members.map((m: Json) => m.value)).toEqual([stays.id]);
      const found = (
        await call('get', `/Groups?${filterQuery(`members[value eq "${gone.id}"]`)}`).expect(200)
      ).body;
      expect(found.totalResults).toBe(0);
      const still = (
        await call('get', `/Groups?${filterQuery(`members[value eq "${stays.id}"]`)}`).expect(200)
      ).body;
      expect(still.Resources.map((g: Json) => g.id)).toEqual([group.id]);
      expect(await membershipRows(orgId, gone.id)).toEqual([]);
    });

    it('refuses the old id as a group member with 400 invalidValue', async () => {
      const res = await call(
        'patch',
        `/Groups/${group.id}`,
        patchOp({ op: 'add', path: 'members', value: [{ value: gone.id }] }),
      );
      expectScimError(res, 400, 'invalidValue');
      expect(res.body.detail).toContain(gone.id);
      const created = await call('post', '/Groups', {
        schemas: [GROUP],
        displayName: `Other ${mode}`,
        members: [{ value: gone.id }],
      });
      expectScimError(created, 400, 'invalidValue');
      expect(await membershipRows(orgId, gone.id)).toEqual([]);
    });

    it('leaves the database as the mode says', async () => {
      const row = await userRow(orgId, gone.id);
      if (mode === 'delete') {
        expect(row).toBeUndefined();
        return;
      }
      expect(row).toBeDefined();
      expect(row!.deprovisioned_at).toBeInstanceOf(Date);
      expect(Math.abs(row!.deprovisioned_at!.getTime() - Date.now())).toBeLessThan(120_000);
      expect(row!.active).toBe(false);
      expect(row!.data.active).toBe(false);
      if (mode === 'deactivate') {
        // The record is kept for the product: every attribute as it was, only active is false.
        expect(row!.user_name).toBe(userName);
        expect(row!.external_id).toBe(externalId);
        expect(row!.display_name).toBe('Dana Fox');
        const { schemas: _schemas, ...sent } = person(userName, externalId);
        expect(row!.data).toEqual({ ...sent, active: false });
      } else {
        expect(row!.user_name).toBe(`deprovisioned-${gone.id}`);
        expect(row!.external_id).toBeNull();
        expect(row!.display_name).toBeNull();
        for (const key of [
          'userName',
          'name',
          'emails',
          'phoneNumbers',
          'externalId',
          'displayName',
          'title',
        ]) {
          expect(row!.data, key).not.toHaveProperty(key);
        }
        expect(row!.data).not.toHaveProperty([ENTERPRISE]);
        const stored = JSON.stringify(row);
        for (const value of [...PERSONAL, userName]) expect(stored, value).not.toContain(value);
      }
    });

    it('frees the userName: POST with it in another case is 201 with a new id', async () => {
      const name = `Freed.${mode}@corp.example`;
      const old = (await call('post', '/Users', { schemas: [USER], userName: name }).expect(201)).body;
      await call('delete', `/Users/${old.id}`).expect(204);
      const again = await call('post', '/Users', { schemas: [USER], userName: name.toUpperCase() }).expect(
        201,
      );
      expect(again.body.id).not.toBe(old.id);
      expect(again.body.userName).toBe(name.toUpperCase());
      const found = (await call('get', `/Users?${filterQuery(`userName eq "${name}"`)}`).expect(200)).body;
      expect(found.Resources.map((u: Json) => u.id)).toEqual([again.body.id]);
      // The old id is still not served, and its row is kept or removed as the mode says.
      expectScimError(await call('get', `/Users/${old.id}`), 404);
      expect(await userRow(orgId, old.id)).toEqual(mode === 'delete' ? undefined : expect.anything());
    });
  });

  it('applies a mode change to later DELETEs only', async () => {
    const { orgId, token } = await orgWithToken({ name: 'Mode change' });
    const call = (m: Method, path: string, body?: unknown) => scim(token.secret, orgId, m, path, body);
    const mk = async (n: string) =>
      (await call('post', '/Users', person(`${n}@corp.example`, `ext-dana-${n}`)).expect(201)).body.id;
    const first = await mk('first');
    await call('delete', `/Users/${first}`).expect(204);
    const kept = await userRow(orgId, first);
    expect(kept!.deprovisioned_at).toBeInstanceOf(Date);

    await patchOrg(orgId, { deprovisioning: 'delete' });
    const second = await mk('second');
    await call('delete', `/Users/${second}`).expect(204);
    expect(await userRow(orgId, second)).toBeUndefined();
    // The user deactivated before the switch stays as it was, and a DELETE of it is still 404.
    expectScimError(await call('delete', `/Users/${first}`), 404);
    expect(await userRow(orgId, first)).toEqual(kept);

    await patchOrg(orgId, { deprovisioning: 'anonymize' });
    const third = await mk('third');
    await call('delete', `/Users/${third}`).expect(204);
    expect((await userRow(orgId, third))!.user_name).toBe(`deprovisioned-${third}`);
    // Not anonymized after the fact.
    expect(await userRow(orgId, first)).toEqual(kept);
    expect(kept!.data.userName).toBe('first@corp.example');
  });

  it('does not deprovision on PATCH active false: the user stays visible, inactive, with its userName', async () => {
    const { orgId, token } = await orgWithToken({ name: 'Inactive', groupSync: true });
    const call = (m: Method, path: string, body?: unknown) => scim(token.secret, orgId, m, path, body);
    const id = (
      await call('post', '/Users', person('inactive@corp.example', 'ext-dana-inactive')).expect(201)
    ).body.id;
    const group = (
      await call('post', '/Groups', {
        schemas: [GROUP],
        displayName: 'Inactive team',
        members: [{ value: id }],
      })
    ).body;
    const res = await call('patch', `/Users/${id}`, patchOp({ op: 'replace', path: 'active', value: false }));
    expect(res.status, res.text).toBe(200);
    expect(res.body.active).toBe(false);
    expect((await call('get', `/Users/${id}`).expect(200)).body.active).toBe(false);
    const inactive = (await call('get', `/Users?${filterQuery('active eq false')}`).expect(200)).body;
    expect(inactive.Resources.map((u: Json) => u.id)).toEqual([id]);
    expect(
      (await call('get', `/Groups/${group.id}`).expect(200)).body.members.map((m: Json) => m.value),
    ).toEqual([id]);
    const row = await userRow(orgId, id);
    expect(row!.deprovisioned_at).toBeNull();
    expect(row!.active).toBe(false);
    expect(row!.user_name).toBe('inactive@corp.example');
    // Its userName is still taken.
    expectScimError(
      await call('post', '/Users', { schemas: [USER], userName: 'INACTIVE@corp.example' }),
      409,
      'uniqueness',
    );
  });
});

// ---------------------------------------------------------------------------------------------
describe('DELETE /admin/v1/orgs/{id}', () => {
  const TABLES = ['scim_tokens', 'users', 'groups', 'group_members', 'audit_events'] as const;

  async function counts(orgId: string): Promise<Record<string, number>> {
    const db = harness.database.db;
    const result: Record<string, number> = {};
    const orgs = await db
      .selectFrom('orgs')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('id', '=', orgId)
      .executeTakeFirstOrThrow();
    result.orgs = Number(orgs.n);
    for (const table of TABLES) {
      const row = await db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('org_id', '=', orgId)
        .executeTakeFirstOrThrow();
      result[table] = Number(row.n);
    }
    return result;
  }

  /** An organization with tokens (one rotated), users (one deprovisioned), groups with members, audit rows. */
  async function populated(name: string) {
    const { orgId, token } = await orgWithToken({ name, groupSync: true });
    const call = (m: Method, path: string, body?: unknown) => scim(token.secret, orgId, m, path, body);
    const extra = await createToken(orgId, { scopes: ['users'] });
    await rotate(orgId, extra.id, {}).expect(201);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push(
        (await call('post', '/Users', { schemas: [USER], userName: `${name}-${i}@corp.example` })).body.id,
      );
    }
    await call('post', '/Groups', {
      schemas: [GROUP],
      displayName: `${name} all`,
      members: ids.map((value) => ({ value })),
    }).expect(201);
    await call('post', '/Groups', {
      schemas: [GROUP],
      displayName: `${name} one`,
      members: [{ value: ids[0] }],
    }).expect(201);
    await call('delete', `/Users/${ids[2]}`).expect(204);
    return { orgId, token, call, userId: ids[0]! };
  }

  it('deletes the organization and all its data; another organization is untouched', async () => {
    const doomed = await populated('doomed');
    const other = await populated('kept');
    const doomedBefore = await counts(doomed.orgId);
    expect(doomedBefore).toEqual({
      orgs: 1,
      scim_tokens: 3,
      users: 3,
      groups: 2,
      group_members: 3,
      audit_events: expect.any(Number),
    });
    expect(doomedBefore.audit_events).toBeGreaterThan(0);
    const otherBefore = await counts(other.orgId);
    const otherUser = (await other.call('get', `/Users/${other.userId}`).expect(200)).body;

    const res = await harness.admin('delete', `/orgs/${doomed.orgId}`).expect(204);
    expect(res.text).toBe('');

    expectAdminError(await harness.admin('get', `/orgs/${doomed.orgId}`), 404, 'not_found');
    expectAdminError(await harness.admin('get', `/orgs/${doomed.orgId}/tokens`), 404, 'not_found');
    expectAdminError(await harness.admin('get', `/orgs/${doomed.orgId}/events`), 404, 'not_found');
    const orgs = (await harness.admin('get', '/orgs').expect(200)).body.orgs;
    expect(orgs.map((o: Json) => o.id)).not.toContain(doomed.orgId);
    expect(orgs.map((o: Json) => o.id)).toContain(other.orgId);

    await expectRefused(doomed.token.secret, doomed.orgId, /./);
    expectScimError(await doomed.call('get', `/Users/${doomed.userId}`), 401);
    expectScimError(
      await doomed.call('post', '/Users', { schemas: [USER], userName: 'ghost@corp.example' }),
      401,
    );

    expect(await counts(doomed.orgId)).toEqual({
      orgs: 0,
      scim_tokens: 0,
      users: 0,
      groups: 0,
      group_members: 0,
      audit_events: 0,
    });

    expect(await counts(other.orgId)).toEqual(otherBefore);
    expect((await other.call('get', `/Users/${other.userId}`).expect(200)).body).toEqual(otherUser);
    expect((await harness.admin('get', `/orgs/${other.orgId}`).expect(200)).body.id).toBe(other.orgId);

    expectAdminError(await harness.admin('delete', `/orgs/${doomed.orgId}`), 404, 'not_found');
  });

  it.each([UNKNOWN_ID, 'not-a-uuid'])('answers 404 not_found for org %s', async (id) => {
    expectAdminError(await harness.admin('delete', `/orgs/${id}`), 404, 'not_found');
  });
});

// ---------------------------------------------------------------------------------------------
describe('audit log', () => {
  const EVENT_KEYS = ['action', 'actor', 'at', 'id', 'requestId', 'resourceId', 'resourceType', 'status'];
  const USER_NAME = 'audit.person@corp.example';
  const VALUES = [
    USER_NAME,
    'audit.person',
    'Audrey',
    'Persson',
    'audit-ext-4711',
    'audit.private@mail.example',
    '+1 555-0199',
    'AUD-EMP-31',
    'Audit Admins',
    'Audit Owners',
    'Audrey P.',
  ];

  let orgId: string;
  let t1: { id: string; secret: string };
  let t2: { id: string; secret: string };
  let groupsOnly: { id: string; secret: string };
  let userId: string;
  let groupId: string;
  /** Responses of the requests that must be recorded, by label. */
  const r: Record<string, supertest.Response> = {};
  let readsAdded: number;

  async function allEvents(): Promise<Json[]> {
    return (await harness.admin('get', `/orgs/${orgId}/events?limit=500`).expect(200)).body.events;
  }

  const as = (token: { secret: string }, m: Method, path: string, body?: unknown) =>
    scim(token.secret, orgId, m, path, body);

  beforeAll(async () => {
    r.orgCreate = await harness.admin('post', '/orgs').send({ name: 'Audited' }).expect(201);
    orgId = r.orgCreate.body.id;
    r.orgUpdate = await harness
      .admin('patch', `/orgs/${orgId}`)
      .set('X-Request-Id', 'audit-org-update-1')
      .send({ groupSync: true })
      .expect(200);
    r.tokenCreate = await harness.admin('post', `/orgs/${orgId}/tokens`).send({ name: 'Okta' }).expect(201);
    t1 = { id: r.tokenCreate.body.id, secret: r.tokenCreate.body.token };
    r.tokenCreateBad = await harness.admin('post', `/orgs/${orgId}/tokens`).send({ name: '' }).expect(400);
    r.tokenCreateGroupsOnly = await harness
      .admin('post', `/orgs/${orgId}/tokens`)
      .send({ scopes: ['groups'] })
      .expect(201);
    groupsOnly = { id: r.tokenCreateGroupsOnly.body.id, secret: r.tokenCreateGroupsOnly.body.token };
    r.tokenRotate = await rotate(orgId, t1.id, { overlapSeconds: 3600 }).expect(201);
    t2 = { id: r.tokenRotate.body.id, secret: r.tokenRotate.body.token };
    r.tokenRevokeRefused = await revoke(orgId, t1.id, {}).expect(409);

    const person = {
      schemas: [USER, ENTERPRISE],
      userName: USER_NAME,
      externalId: 'audit-ext-4711',
      name: { givenName: 'Audrey', familyName: 'Persson' },
      emails: [{ value: 'audit.private@mail.example', type: 'home' }],
      phoneNumbers: [{ value: '+1 555-0199' }],
      [ENTERPRISE]: { employeeNumber: 'AUD-EMP-31' },
    };
    r.userCreate = await as(t2, 'post', '/Users', person)
      .set('X-Request-Id', 'audit-user-create-1')
      .expect(201);
    userId = r.userCreate.body.id;
    r.userReplace = await as(t2, 'put', `/Users/${userId}`, { ...person, displayName: 'Audrey P.' }).expect(
      200,
    );
    r.userPatch = await as(
      t2,
      'patch',
      `/Users/${userId}`,
      patchOp(
        { op: 'replace', path: 'name.givenName', value: 'Audrey' },
        { op: 'add', path: 'title', value: 'x' },
      ),
    ).expect(200);
    r.userDuplicate = await as(t2, 'post', '/Users', { ...person, userName: USER_NAME.toUpperCase() }).expect(
      409,
    );
    r.userPatchBad = await as(
      t2,
      'patch',
      `/Users/${userId}`,
      patchOp({ op: 'frobnicate', path: 'title' }),
    ).expect(400);
    r.userForbidden = await as(groupsOnly, 'post', '/Users', { schemas: [USER], userName: USER_NAME }).expect(
      403,
    );
    r.userUnsafeRequestId = await as(
      t2,
      'patch',
      `/Users/${userId}`,
      patchOp({ op: 'remove', path: 'title' }),
    )
      .set('X-Request-Id', 'not a safe id!')
      .expect(200);

    r.groupCreate = await as(t2, 'post', '/Groups', {
      schemas: [GROUP],
      displayName: 'Audit Admins',
      members: [{ value: userId }],
    }).expect(201);
    groupId = r.groupCreate.body.id;
    r.groupReplace = await as(t2, 'put', `/Groups/${groupId}`, {
      schemas: [GROUP],
      displayName: 'Audit Owners',
      members: [{ value: userId }],
    }).expect(200);
    r.groupPatch = await as(
      t2,
      'patch',
      `/Groups/${groupId}`,
      patchOp({ op: 'remove', path: `members[value eq "${userId}"]` }),
    ).expect(204); // group PATCH answers 204 unless a body is asked for (Entra)

    // Reads and searches: none of them may be recorded.
    const before = (await allEvents()).length;
    await as(t2, 'get', '/Users').expect(200);
    await as(t2, 'get', `/Users/${userId}`).expect(200);
    await as(t2, 'get', `/Users?${filterQuery(`userName eq "${USER_NAME}"`)}`).expect(200);
    await as(t2, 'post', '/Users/.search', {
      schemas: [SEARCH],
      filter: `userName eq "${USER_NAME}"`,
    }).expect(200);
    await as(t2, 'get', '/Groups').expect(200);
    await as(t2, 'get', `/Groups/${groupId}`).expect(200);
    await as(t2, 'post', '/Groups/.search', { schemas: [SEARCH] }).expect(200);
    await as(t2, 'post', '/.search', { schemas: [SEARCH] }).expect(200);
    await as(t2, 'get', '/ServiceProviderConfig').expect(200);
    await as(t2, 'get', `/Users/${randomUUID()}`).expect(404);
    await harness.admin('get', `/orgs/${orgId}`).expect(200);
    await harness.admin('get', `/orgs/${orgId}/tokens`).expect(200);
    readsAdded = (await allEvents()).length - before;

    r.groupDelete = await as(t2, 'delete', `/Groups/${groupId}`).expect(204);
    r.userDelete = await as(t2, 'delete', `/Users/${userId}`).expect(204);
    r.tokenRevoke = await revoke(orgId, t1.id, {}).expect(200);
  });

  /** The one event recorded for a response, found by its X-Request-Id. */
  async function eventOf(res: supertest.Response): Promise<Json> {
    const requestId = res.headers['x-request-id'];
    expect(requestId).toEqual(expect.any(String));
    const matching = (await allEvents()).filter((e) => e.requestId === requestId);
    expect(matching, `events for request ${requestId}`).toHaveLength(1);
    return matching[0];
  }

  it('answers {events, nextCursor}, newest first, every event in the Event shape', async () => {
    const res = await harness.admin('get', `/orgs/${orgId}/events`).expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(Object.keys(res.body).sort()).toEqual(['events', 'nextCursor']);
    expect(res.body.nextCursor).toBeNull();
    const events: Json[] = res.body.events;
    expect(events.length).toBeGreaterThanOrEqual(20);
    for (const e of events) {
      expect(Object.keys(e).sort()).toEqual(EVENT_KEYS);
      expect(e.id).toMatch(/^\d+$/);
      expect(e.at).toMatch(ISO);
      expect(e.actor).toMatch(/^(admin|token:[0-9a-f-]{36})$/);
      expect(typeof e.action).toBe('string');
      expect(Number.isInteger(e.status)).toBe(true);
      expect(typeof e.requestId).toBe('string');
    }
    for (let i = 1; i < events.length; i++) {
      expect(BigInt(events[i - 1].id) > BigInt(events[i].id)).toBe(true);
      expect(Date.parse(events[i - 1].at)).toBeGreaterThanOrEqual(Date.parse(events[i].at));
    }
    expect(events[0].action).toBe('token.revoke');
    expect(events.at(-1).action).toBe('org.create');
  });

  it.each<[string, string, string, string, () => string, number]>([
    ['orgCreate', 'org.create', 'admin', 'Org', () => orgId, 201],
    ['orgUpdate', 'org.update', 'admin', 'Org', () => orgId, 200],
    ['tokenCreate', 'token.create', 'admin', 'Token', () => t1.id, 201],
    // Debatable: the rotated (old) token is the resource, as in the path; the new id is in the answer.
    ['tokenRotate', 'token.rotate', 'admin', 'Token', () => t1.id, 201],
    ['tokenRevokeRefused', 'token.revoke', 'admin', 'Token', () => t1.id, 409],
    ['tokenRevoke', 'token.revoke', 'admin', 'Token', () => t1.id, 200],
  ])('records the admin action %s as %s', async (label, action, actor, resourceType, resourceId, status) => {
    const e = await eventOf(r[label]!);
    expect(e).toMatchObject({ action, actor, resourceType, resourceId: resourceId(), status });
    expect(e.requestId).toBe(r[label]!.headers['x-request-id']);
  });

  it('records a failed admin action with its status', async () => {
    const e = await eventOf(r.tokenCreateBad!);
    expect(e).toMatchObject({ action: 'token.create', actor: 'admin', resourceType: 'Token', status: 400 });
  });

  it.each<[string, string, string, () => string, number]>([
    ['userCreate', 'user.create', 'User', () => userId, 201],
    ['userReplace', 'user.replace', 'User', () => userId, 200],
    ['userPatch', 'user.patch', 'User', () => userId, 200],
    ['userDelete', 'user.delete', 'User', () => userId, 204],
    ['groupCreate', 'group.create', 'Group', () => groupId, 201],
    ['groupReplace', 'group.replace', 'Group', () => groupId, 200],
    ['groupPatch', 'group.patch', 'Group', () => groupId, 204],
    ['groupDelete', 'group.delete', 'Group', () => groupId, 204],
  ])(
    'records the SCIM write %s as %s by the token',
    async (label, action, resourceType, resourceId, status) => {
      const e = await eventOf(r[label]!);
      expect(e).toEqual({
        id: expect.stringMatching(/^\d+$/),
        at: expect.stringMatching(ISO),
        actor: `token:${t2.id}`,
        action,
        resourceType,
        resourceId: resourceId(),
        status,
        requestId: r[label]!.headers['x-request-id'],
      });
    },
  );

  it('records failed SCIM writes with their status', async () => {
    expect(await eventOf(r.userDuplicate!)).toMatchObject({
      action: 'user.create',
      actor: `token:${t2.id}`,
      resourceType: 'User',
      status: 409,
    });
    expect(await eventOf(r.userPatchBad!)).toMatchObject({
      action: 'user.patch',
      actor: `token:${t2.id}`,
      resourceId: userId,
      status: 400,
    });
    expect(await eventOf(r.userForbidden!)).toMatchObject({
      action: 'user.create',
      actor: `token:${groupsOnly.id}`,
      resourceType: 'User',
      status: 403,
    });
  });

  it('uses the client X-Request-Id when it is sane, and its own (echoed in the header) otherwise', async () => {
    expect(r.orgUpdate!.headers['x-request-id']).toBe('audit-org-update-1');
    expect((await eventOf(r.orgUpdate!)).requestId).toBe('audit-org-update-1');
    expect(r.userCreate!.headers['x-request-id']).toBe('audit-user-create-1');
    expect((await eventOf(r.userCreate!)).action).toBe('user.create');
    const generated = r.userUnsafeRequestId!.headers['x-request-id'];
    expect(generated).not.toBe('not a safe id!');
    expect(generated).toMatch(/^[\w.:-]{1,128}$/);
    expect(await eventOf(r.userUnsafeRequestId!)).toMatchObject({ action: 'user.patch', status: 200 });
  });

  it('records no read or search (GET, .search, discovery, admin GETs)', () => {
    expect(readsAdded).toBe(0);
  });

  it('holds exactly the recorded writes, nothing else', async () => {
    const recorded = new Set(Object.values(r).map((res) => res.headers['x-request-id']));
    const events = await allEvents();
    expect(events).toHaveLength(recorded.size);
    expect(new Set(events.map((e) => e.requestId))).toEqual(recorded);
  });

  it('contains no secret and no attribute value, in the API or in the table', async () => {
    const api = JSON.stringify(await allEvents());
    const rows = JSON.stringify(
      await harness.database.db.selectFrom('audit_events').selectAll().where('org_id', '=', orgId).execute(),
    );
    for (const text of [api, rows]) {
      for (const secret of [t1.secret, t2.secret, groupsOnly.secret, ADMIN_TOKEN]) {
        expect(text).not.toContain(secret);
        expect(text).not.toContain(secret.slice(-20));
      }
      for (const value of VALUES) expect(text.toLowerCase(), value).not.toContain(value.toLowerCase());
    }
  });

  it('pages with limit and cursor: every event once, in order', async () => {
    const all = await allEvents();
    const first = await harness.admin('get', `/orgs/${orgId}/events?limit=2`).expect(200);
    expect(first.body.events).toHaveLength(2);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    expect(first.body.events).toEqual(all.slice(0, 2));
    const seen: Json[] = [...first.body.events];
    let cursor: string | null = first.body.nextCursor;
    let pages = 1;
    while (cursor) {
      const page = await harness
        .admin('get', `/orgs/${orgId}/events?limit=2&cursor=${encodeURIComponent(cursor)}`)
        .expect(200);
      expect(page.body.events.length).toBeGreaterThan(0);
      expect(page.body.events.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.events);
      cursor = page.body.nextCursor;
      expect(++pages).toBeLessThanOrEqual(all.length);
    }
    expect(new Set(seen.map((e) => e.id)).size).toBe(seen.length);
    expect(seen).toEqual(all);
    // A page size that divides the log exactly still ends with a null cursor.
    const exact = await harness.admin('get', `/orgs/${orgId}/events?limit=${all.length}`).expect(200);
    expect(exact.body.events).toEqual(all);
    expect(exact.body.nextCursor).toBeNull();
  });

  it('defaults to 50 a page', async () => {
    const other = await createOrg({ name: 'Busy' });
    for (let i = 0; i < 55; i++)
      await harness
        .admin('patch', `/orgs/${other.id}`)
        .send({ name: `Busy ${i}` })
        .expect(200);
    const res = await harness.admin('get', `/orgs/${other.id}/events`).expect(200);
    expect(res.body.events).toHaveLength(50);
    expect(res.body.nextCursor).toEqual(expect.any(String));
    const rest = await harness
      .admin('get', `/orgs/${other.id}/events?cursor=${res.body.nextCursor}`)
      .expect(200);
    expect(rest.body.events).toHaveLength(6);
    expect(rest.body.nextCursor).toBeNull();
  });

  it("filters by resourceId: only that resource's events", async () => {
    const all = await allEvents();
    for (const id of [userId, groupId, t1.id]) {
      const res = await harness.admin('get', `/orgs/${orgId}/events?resourceId=${id}`).expect(200);
      expect(res.body.events.length).toBeGreaterThan(0);
      expect(res.body.events).toEqual(all.filter((e) => e.resourceId === id));
    }
    const userEvents = (await harness.admin('get', `/orgs/${orgId}/events?resourceId=${userId}`).expect(200))
      .body.events;
    expect(userEvents.map((e: Json) => `${e.action} ${e.status}`)).toEqual([
      'user.delete 204',
      'user.patch 200',
      'user.patch 400',
      'user.patch 200',
      'user.replace 200',
      'user.create 201',
    ]);
    const none = await harness.admin('get', `/orgs/${orgId}/events?resourceId=${UNKNOWN_ID}`).expect(200);
    expect(none.body).toEqual({ events: [], nextCursor: null });
  });

  it('filters by since (inclusive) and until (exclusive)', async () => {
    const all = await allEvents();
    const pivot = all[Math.floor(all.length / 2)].at as string;
    const since = (await harness.admin('get', `/orgs/${orgId}/events?limit=500&since=${pivot}`).expect(200))
      .body.events;
    const until = (await harness.admin('get', `/orgs/${orgId}/events?limit=500&until=${pivot}`).expect(200))
      .body.events;
    expect(since).toEqual(all.filter((e) => Date.parse(e.at) >= Date.parse(pivot)));
    expect(until).toEqual(all.filter((e) => Date.parse(e.at) < Date.parse(pivot)));
    expect(since.length).toBeGreaterThan(0);
    expect(until.length).toBeGreaterThan(0);
    expect(since.length + until.length).toBe(all.length);
    const window = (
      await harness
        .admin('get', `/orgs/${orgId}/events?limit=500&since=${all.at(-1).at}&until=${all[0].at}`)
        .expect(200)
    ).body.events;
    expect(window).toEqual(all.filter((e) => Date.parse(e.at) < Date.parse(all[0].at)));
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect(
      (await harness.admin('get', `/orgs/${orgId}/events?since=${future}`).expect(200)).body.events,
    ).toEqual([]);
    // An offset is accepted (encoded, since '+' in a query means a space).
    const offset = encodeURIComponent('2000-01-01T00:00:00+02:00');
    expect(
      (await harness.admin('get', `/orgs/${orgId}/events?limit=500&since=${offset}`).expect(200)).body.events,
    ).toEqual(all);
  });

  it.each([
    'limit=0',
    'limit=501',
    'limit=x',
    'limit=1.5',
    'limit=-1',
    'cursor=abc',
    'cursor=-5',
    'since=yesterday',
    'since=2024-01-01',
    'until=soon',
  ])('answers 400 invalid_request for ?%s', async (query) => {
    expectAdminError(await harness.admin('get', `/orgs/${orgId}/events?${query}`), 400, 'invalid_request');
  });

  // Debatable: the cursor check accepts up to 19 digits, but not every 19-digit number fits a
  // bigint; such a cursor was never issued, so 400 is the natural answer (200 with no events would
  // also do). It must not be a 500.
  it('answers a 19-digit cursor beyond bigint with 400 (or an empty page), not 500', async () => {
    const res = await harness.admin('get', `/orgs/${orgId}/events?cursor=9999999999999999999`);
    expect([200, 400], res.text).toContain(res.status);
  });

  it.each([UNKNOWN_ID, 'not-a-uuid'])('answers 404 not_found for the events of org %s', async (id) => {
    expectAdminError(await harness.admin('get', `/orgs/${id}/events`), 404, 'not_found');
  });

  // A malformed percent-escape in the id of a SCIM write: the request answers a SCIM error (no such
  // user), and is recorded like any failed write. GET of the same path already answers a SCIM 404.
  it('answers a write to /Users/%ZZ with a SCIM 404 (not a 500) and records it', async () => {
    const other = await orgWithToken({ name: 'Audited %ZZ' });
    const call = (m: Method, path: string, body?: unknown) =>
      scim(other.token.secret, other.orgId, m, path, body);
    expectScimError(await call('get', '/Users/%ZZ'), 404);
    const res = await call('delete', '/Users/%ZZ');
    expectScimError(res, 404);
    const events = (await harness.admin('get', `/orgs/${other.orgId}/events`).expect(200)).body.events;
    expect(events.filter((e: Json) => e.requestId === res.headers['x-request-id'])).toEqual([
      expect.objectContaining({ action: 'user.delete', actor: `token:${other.token.id}`, status: 404 }),
    ]);
    expectScimError(await call('put', '/Users/%ZZ', { schemas: [USER], userName: 'x@corp.example' }), 404);
  });
});
