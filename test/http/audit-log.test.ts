// The audit log over HTTP on a real database: what is recorded and what is not, no secret or
// attribute value, paging and filters.
import { randomUUID } from 'node:crypto';
import type supertest from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { adminCalls, ISO, type Json, type Method, UNKNOWN_ID } from '../helpers/admin.js';
import { ADMIN_TOKEN, type Harness, useHarness } from '../helpers/harness.js';
import {
  ENTERPRISE,
  expectAdminError,
  expectScimError,
  filterQuery,
  GROUP,
  patchOp,
  SEARCH,
  USER,
} from '../helpers/scim.js';

let harness: Harness;
useHarness((h) => {
  harness = h;
});
const { scim, createOrg, rotate, revoke, orgWithToken } = adminCalls(() => harness);

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
