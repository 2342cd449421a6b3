// Token lifecycles over HTTP on a real database: rotation (the replacement, the overlap, chains,
// conflicts), the revocation guard after a rotation, and scope denials on writes.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { adminCalls, ISO, type Json, UNKNOWN_ID, UUID } from '../helpers/admin.js';
import { wallClockPast } from '../helpers/clock.js';
import { type Harness, useHarness } from '../helpers/harness.js';
import { expectAdminError, expectScimError, filterQuery, GROUP, patchOp, USER } from '../helpers/scim.js';

let harness: Harness;
useHarness((h) => {
  harness = h;
});
const { scim, expectRefused, createOrg, createToken, listTokens, tokenView, rotate, revoke, orgWithToken } =
  adminCalls(() => harness);

let seq = 0;
/** A name no other test uses. */
const unique = (prefix: string) => `${prefix}-${++seq}-${randomUUID().slice(0, 8)}`;

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

  it('with overlapSeconds 1, expires the old token a second later; the new one stays', async () => {
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
    // The bounds above pin the 1 s window the request asked for; the clock SCIM requests are checked
    // by is moved to its end rather than waited for.
    harness.clock.advanceTo(expiresAt);
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
    // Rotation stamps with the wall clock: once it has ticked past the old token's creation, a
    // replacement that copied the old expiry instead of starting a lifetime of its own shows.
    await wallClockPast(old.view.createdAt);
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
      // The API refuses an expiresAt in the past, and rotation checks expiry by the wall clock (an
      // expiry reached is proven above and in auth.test.ts); moving expires_at into the past stands
      // for the passing of time.
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

    // Revoking again is idempotent: 200, revokedAt unchanged (and a new stamp would now differ).
    await wallClockPast(revoked.body.revokedAt);
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
