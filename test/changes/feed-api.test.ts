// Reading the change feed through the admin API: paging by cursor, filters, long polls, retention,
// and the read-only API keys a product reads it with.
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { currentCursor, readAll } from '../helpers/changes.js';
import { type Harness, type Tenant, useHarness } from '../helpers/harness.js';
import { expectAdminError, GROUP, USER } from '../helpers/scim.js';

let harness: Harness;
useHarness((h) => {
  harness = h;
});

const user = (userName: string) => ({ schemas: [USER], userName, active: true });

async function tenant(): Promise<Tenant> {
  const org = await harness.createOrg({ name: 'Reader', groupSync: true });
  return harness.tenantOf(org.id, await harness.createToken(org.id));
}

describe('GET /admin/v1/changes', () => {
  let a: Tenant;
  let b: Tenant;
  let start: string;
  beforeAll(async () => {
    start = await currentCursor(harness);
    a = await tenant();
    b = await tenant();
    for (let i = 0; i < 5; i++) {
      await a.post('/Users', user(`a${i}`)).expect(201);
      await b.post('/Users', user(`b${i}`)).expect(201);
    }
    await a.post('/Groups', { schemas: [GROUP], displayName: 'A team' }).expect(201);
  });

  it('pages by cursor in position order, each change once', async () => {
    const seen: string[] = [];
    let after = start;
    for (;;) {
      const res = await harness.admin('get', `/changes?after=${after}&limit=3`).expect(200);
      expect(res.body.changes.length).toBeLessThanOrEqual(3);
      seen.push(...res.body.changes.map((c: { cursor: string }) => c.cursor));
      if (res.body.changes.length === 0) {
        expect(res.body.nextCursor).toBe(after);
        break;
      }
      after = res.body.nextCursor;
    }
    expect(seen.length).toBe(11);
    expect(seen.map(BigInt)).toEqual([...seen.map(BigInt)].sort((x, y) => (x < y ? -1 : 1)));
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('filters by organization and by type', async () => {
    const ofA = await readAll(harness, { orgId: a.orgId, after: start });
    expect(ofA.changes.map((c) => c.type)).toEqual([...Array(5).fill('user.created'), 'group.created']);
    const groups = await readAll(harness, { after: start, types: 'group.created,group.deleted' });
    expect(groups.changes.map((c) => [c.orgId, c.type])).toEqual([[a.orgId, 'group.created']]);
    const ofBUsers = await readAll(harness, { orgId: b.orgId, after: start, types: 'user.created' });
    expect(ofBUsers.changes).toHaveLength(5);
  });

  it('without a cursor starts at the oldest change kept', async () => {
    const res = await harness.admin('get', '/changes?limit=1').expect(200);
    expect(res.body.changes).toHaveLength(1);
    expect(BigInt(res.body.changes[0].cursor)).toBeLessThanOrEqual(BigInt(start) + 1n);
  });

  it.each([
    ['after=abc', 'after'],
    ['after=-1', 'after'],
    ['orgId=nope', 'orgId'],
    ['types=user.created,user.exploded', 'user.exploded'],
    ['types=', 'types'],
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['wait=31', 'wait'],
    ['wait=soon', 'wait'],
  ])('refuses %s with 400 naming the parameter', async (query, named) => {
    const res = await harness.admin('get', `/changes?${query}`);
    expectAdminError(res, 400, 'invalid_request');
    expect(res.body.error.message).toContain(named);
  });

  it('refuses a cursor past the end of the feed rather than move the reader back', async () => {
    const last = BigInt(await currentCursor(harness));
    const ahead = (last + 1000n).toString();
    const res = await harness.admin('get', `/changes?after=${ahead}`);
    expectAdminError(res, 400, 'invalid_request');
    expect(res.body.error.message).toContain(
      `after: ${ahead} is past the end of this feed (its last position is ${last})`,
    );
    expectAdminError(await harness.admin('get', `/changes?after=${ahead}&wait=5`), 400, 'invalid_request');
    // The last position itself is a good cursor.
    await harness.admin('get', `/changes?after=${last}`).expect(200);
  });

  it('a long poll answers as soon as a change commits', async () => {
    const after = await currentCursor(harness);
    const wait = 20;
    const polls = harness.changes.longPolls;
    const started = Date.now();
    const answered = harness
      .admin('get', `/changes?after=${after}&orgId=${a.orgId}&wait=${wait}`)
      .then((res) => res);
    await expect.poll(() => harness.changes.longPolls, { timeout: 10_000 }).toBe(polls + 1);
    await a.post('/Users', user('late')).expect(201);
    const res = await answered;
    expect(res.status).toBe(200);
    expect(
      res.body.changes.map((c: { type: string; data: { user_name: string } }) => [c.type, c.data.user_name]),
    ).toEqual([['user.created', 'late']]);
    // The change ended the wait, not the wait's own end (which would also answer it).
    expect(Date.now() - started).toBeLessThan(wait * 1000);
  });

  it('a long poll with nothing to say answers empty when its wait is over', async () => {
    const after = await currentCursor(harness);
    const wait = 1;
    const polls = harness.changes.longPolls;
    const started = Date.now();
    const answered = harness
      .admin('get', `/changes?after=${after}&orgId=${a.orgId}&wait=${wait}`)
      .then((res) => res);
    // It waits rather than answering at once ...
    await expect.poll(() => harness.changes.longPolls).toBe(polls + 1);
    const res = await answered;
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ changes: [], nextCursor: after });
    // ... and no less than it asked: the wait ends by a deadline taken after `started`.
    expect(Date.now() - started).toBeGreaterThanOrEqual(wait * 1000);
    expect(harness.changes.longPolls).toBe(polls);
  });

  it('a cursor whose changes were removed by retention gets 410', async () => {
    const t = await tenant();
    await t.post('/Users', user('old')).expect(201);
    const before = await currentCursor(harness);
    const cursorBeforeOld = (BigInt(before) - 1n).toString();
    // Everything that exists now is past a retention that ends tomorrow.
    const removed = await harness.changes.purge(new Date(Date.now() + 31 * 86_400_000));
    expect(removed).toBeGreaterThan(0);
    const res = await harness.admin('get', `/changes?after=${cursorBeforeOld}`);
    expectAdminError(res, 410, 'cursor_expired');
    expect(res.body.error.message).toMatch(/resynchronise from the read model/);
    // The cursor of the newest change removed is still good, and so is none at all.
    await harness.admin('get', `/changes?after=${before}`).expect(200);
    const fresh = await harness.admin('get', '/changes').expect(200);
    expect(fresh.body.changes).toEqual([]);
    await t.post('/Users', user('new')).expect(201);
    const after = await readAll(harness, { after: before });
    expect(after.changes.map((c) => c.data.user_name)).toEqual(['new']);
  });
});

describe('API keys', () => {
  it('are shown once, read the feed, and nothing else', async () => {
    const created = await harness.admin('post', '/api-keys').send({ name: 'product' }).expect(201);
    expect(created.body).toMatchObject({ name: 'product', scope: 'changes:read', revokedAt: null });
    const key: string = created.body.key;
    expect(key).toMatch(/^scimdkey_/);
    expect(created.body.prefix).toBe(key.slice(0, created.body.prefix.length));

    const list = await harness.admin('get', '/api-keys').expect(200);
    const listed = list.body.apiKeys.find((k: { id: string }) => k.id === created.body.id);
    expect(listed).toBeDefined();
    expect(JSON.stringify(list.body)).not.toContain(key);

    const asKey = (method: 'get' | 'post' | 'delete', path: string) =>
      harness.http[method](`/admin/v1${path}`).set('Authorization', `Bearer ${key}`);
    const res = await asKey('get', '/changes?limit=5').expect(200);
    expect(Array.isArray(res.body.changes)).toBe(true);
    for (const [method, path] of [
      ['get', '/orgs'],
      ['post', '/orgs'],
      ['get', '/api-keys'],
      ['post', '/api-keys'],
    ] as const) {
      expectAdminError(await asKey(method, path), 403, 'forbidden');
    }
    const org = await harness.createOrg();
    expectAdminError(await asKey('delete', `/orgs/${org.id}`), 403, 'forbidden');
    await harness.admin('get', `/orgs/${org.id}`).expect(200);

    const used = await harness.admin('get', '/api-keys').expect(200);
    expect(used.body.apiKeys.find((k: { id: string }) => k.id === created.body.id).lastUsedAt).not.toBeNull();

    const revoked = await harness.admin('post', `/api-keys/${created.body.id}/revoke`).send({}).expect(200);
    expect(revoked.body.revokedAt).not.toBeNull();
    expectAdminError(await asKey('get', '/changes'), 401, 'unauthorized');
  });

  describe('revoked while a long poll waits', () => {
    async function waitingWithKey(t: Tenant) {
      const created = await harness.admin('post', '/api-keys').send({ name: 'poller' }).expect(201);
      const after = await currentCursor(harness);
      const polls = harness.changes.longPolls;
      const answer = harness.http
        .get(`/admin/v1/changes?after=${after}&orgId=${t.orgId}&wait=20`)
        .set('Authorization', `Bearer ${created.body.key}`)
        .then((res) => res);
      await expect.poll(() => harness.changes.longPolls).toBe(polls + 1);
      return { id: created.body.id as string, answer, polls };
    }

    it('ends the poll at once with 401', async () => {
      const t = await tenant();
      const { id, answer, polls } = await waitingWithKey(t);
      await harness.admin('post', `/api-keys/${id}/revoke`).send({}).expect(200);
      // At once: the poll no longer waits by the time the revocation is answered.
      expect(harness.changes.longPolls).toBe(polls);
      const res = await answer;
      expectAdminError(res, 401, 'unauthorized');
      expect(res.body.error.message).toMatch(/revoked/);
    });

    it('answers no change written after the revocation, even when another process revoked it', async () => {
      const t = await tenant();
      const { id, answer } = await waitingWithKey(t);
      // As another process would: the row changes, and this process hears nothing of it.
      await sql`update api_keys set revoked_at = now() where id = ${id}`.execute(harness.database.db);
      await t.post('/Users', user('after-revocation')).expect(201);
      const res = await answer;
      expectAdminError(res, 401, 'unauthorized');
      expect(res.text).not.toContain('after-revocation');
    });
  });

  it('a wrong key, a SCIM token or a made-up key is 401', async () => {
    const t = await tenant();
    for (const bearer of ['scimdkey_0123456789abcdefghijklmnopqrstuvwxyz', t.token, 'nothing']) {
      const res = await harness.http.get('/admin/v1/changes').set('Authorization', `Bearer ${bearer}`);
      expectAdminError(res, 401, 'unauthorized');
    }
    expectAdminError(await harness.admin('post', '/api-keys/not-a-key/revoke').send({}), 404, 'not_found');
    expectAdminError(await harness.admin('post', '/api-keys').send({}), 400, 'invalid_request');
  });
});
