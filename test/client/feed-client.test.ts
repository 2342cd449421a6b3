// FeedClient against a live scimd: following users as SCIM creates them, filtering by type and
// organization, restarts of scimd in the middle of a follow (nothing missed, nothing twice), a cursor
// past retention (CursorExpired), Retry-After on 503, refusals that are not retried, and an abort.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { ChangeFeed, DEFAULT_RETENTION_DAYS } from '../../src/changes/change-feed.js';
import {
  AccessDenied,
  type Change,
  CursorExpired,
  FeedClient,
  type FeedClientOptions,
  FeedError,
  type Follower,
  type Retry,
  type UserChanged,
  type UserCreated,
} from '../../src/client/index.js';
import { Events } from '../helpers/events.js';
import { readToEnd } from '../helpers/feed-client.js';
import { type LiveScimd, startLiveScimd } from '../helpers/live-scimd.js';
import { newUser, type RemoteTenant, remote } from '../helpers/remote.js';
import { patchOp } from '../helpers/scim.js';

const DAY_MS = 86_400_000;

let scimd: LiveScimd;
let apiKey: string;

beforeAll(async () => {
  scimd = await startLiveScimd();
  apiKey = (await createApiKey('product')).key;
});
afterAll(() => scimd?.close());

const admin = () => remote(scimd.origin, scimd.adminToken);

async function createApiKey(name: string): Promise<{ id: string; key: string }> {
  const created = await admin().admin('POST', '/api-keys', { name });
  expect(created.status).toBe(201);
  return created.body;
}

const client = (options: Partial<FeedClientOptions> = {}) =>
  new FeedClient({ url: scimd.origin, apiKey, ...options });

/** The global fetch, each URL it is asked for told to `requests` first. */
const fetchTelling =
  (requests: Events<string>): typeof fetch =>
  (input, init) => {
    requests.push(String(input));
    return fetch(input, init);
  };

/** Where a consumer that starts now reads after. */
const feedEnd = async (feed = client()) => (await readToEnd(feed)).end;

/** Follows in the background, keeping each change as it comes; `hold` may keep the loop on a change. */
function collect<C extends Change>(
  follower: Follower<C>,
  hold?: (change: C, seen: number) => Promise<void> | undefined,
) {
  const changes = new Events<C>();
  const ended = (async () => {
    for await (const change of follower) {
      changes.push(change);
      await hold?.(change, changes.items.length);
    }
  })();
  return {
    changes: changes.items,
    ended,
    /** Resolves once `n` changes came; fails at once if the loop ends or throws before. */
    count: (n: number) =>
      Promise.race([
        changes.count(n),
        ended.then(() => {
          throw new Error(`the follow ended after ${changes.items.length} changes`);
        }),
      ]),
  };
}

/** What following throws (the test fails if the loop ends without). */
async function thrownBy(follower: Follower): Promise<unknown> {
  try {
    for await (const change of follower) expect.fail(`no change was expected, got ${change.type}`);
  } catch (error) {
    return error;
  }
  throw new Error('the follow ended without an error');
}

async function createUsers(tenant: RemoteTenant, names: readonly string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const name of names) {
    const res = await tenant.scim('POST', '/Users', newUser(name));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    ids.push(res.body.id);
  }
  return ids;
}

const userNames = (changes: readonly Change[]) =>
  changes.map((c) => (c.resourceType === 'User' && 'user_name' in c.data ? c.data.user_name : c.type));

interface Scripted {
  readonly status: number;
  readonly headers?: Record<string, string>;
  readonly body?: unknown;
}

/** A server in front of scimd: it answers the next requests as scripted, and passes the others on. */
async function startFront() {
  const script: Scripted[] = [];
  const requests = new Events<string>();
  const server = createServer(async (req, res) => {
    requests.push(req.url ?? '');
    const next = script.shift();
    if (next) {
      res.writeHead(next.status, { 'content-type': 'application/json', ...next.headers });
      res.end(JSON.stringify(next.body ?? { error: { code: 'unavailable', message: 'scripted' } }));
      return;
    }
    const upstream = await fetch(`${scimd.origin}${req.url}`, {
      headers: { authorization: req.headers.authorization ?? '' },
    });
    res.writeHead(upstream.status, { 'content-type': 'application/json' });
    res.end(await upstream.text());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    script,
    requests,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('following', () => {
  it('yields users as SCIM creates them, typed, each with the cursor to store', async () => {
    const tenant = await admin().tenant('follow');
    const after = await feedEnd();
    const stop = new AbortController();
    const follower = client().follow({ after, orgId: tenant.orgId, signal: stop.signal });
    expectTypeOf(follower).toEqualTypeOf<Follower<Change>>();
    const follow = collect(follower);
    const names = ['ada@acme.example', 'grace@acme.example', 'edsger@acme.example'];
    const ids = await createUsers(tenant, names);
    await follow.count(3);
    stop.abort();
    await follow.ended;

    expect(follow.changes.map((c) => [c.type, c.resourceId])).toEqual(ids.map((id) => ['user.created', id]));
    expect(userNames(follow.changes)).toEqual(names);
    const cursors = follow.changes.map((c) => BigInt(c.cursor));
    expect(cursors.every((cursor, n) => cursor > (n === 0 ? BigInt(after) : cursors[n - 1]!))).toBe(true);
    // The loop finished with the third change: that is where to follow from again.
    expect(follower.cursor).toBe(follow.changes[2]!.cursor);
  });

  it('keeps to the types and the organization asked for, typed accordingly', async () => {
    const a = await admin().tenant('filtered a');
    const b = await admin().tenant('filtered b');
    const after = await feedEnd();
    const stop = new AbortController();
    const follower = client().follow({
      after,
      orgId: a.orgId,
      types: ['user.created', 'user.deactivated'],
      signal: stop.signal,
    });
    expectTypeOf(follower).toEqualTypeOf<Follower<UserCreated | UserChanged<'user.deactivated'>>>();
    const follow = collect(follower);
    const deactivate = patchOp({ op: 'replace', path: 'active', value: false });
    const [x] = await createUsers(a, ['x@a.example']);
    expect(
      (await a.scim('PATCH', `/Users/${x}`, patchOp({ op: 'replace', path: 'title', value: 'CTO' }))).status,
    ).toBe(200);
    const [y] = await createUsers(b, ['y@b.example']);
    expect((await b.scim('PATCH', `/Users/${y}`, deactivate)).status).toBe(200);
    // The last change written: whatever the filters let through wrongly would come before it.
    expect((await a.scim('PATCH', `/Users/${x}`, deactivate)).status).toBe(200);
    await follow.count(2);
    stop.abort();
    await follow.ended;

    expect(follow.changes.map((c) => [c.type, c.orgId, c.resourceId])).toEqual([
      ['user.created', a.orgId, x],
      ['user.deactivated', a.orgId, x],
    ]);
    const deactivated = follow.changes[1]!;
    expect(deactivated.type === 'user.deactivated' && deactivated.changedAttributes).toContain('active');
  });

  it('reads a page at a time with read()', async () => {
    const tenant = await admin().tenant('pages');
    const after = await feedEnd();
    const ids = await createUsers(tenant, ['p1@acme.example', 'p2@acme.example', 'p3@acme.example']);
    const first = await client().read({ after, orgId: tenant.orgId, limit: 2 });
    expect(first.changes.map((c) => c.resourceId)).toEqual(ids.slice(0, 2));
    expect(first.nextCursor).toBe(first.changes[1]!.cursor);
    const second = await client().read({
      after: first.nextCursor,
      orgId: tenant.orgId,
      types: ['user.created'],
    });
    expectTypeOf(second.changes).toEqualTypeOf<readonly UserCreated[]>();
    expect(second.changes.map((c) => c.data.id)).toEqual(ids.slice(2));
  });
});

describe('a restart of scimd', () => {
  it('is followed through, missing nothing and seeing nothing twice', async () => {
    const tenant = await admin().tenant('restart');
    const after = await feedEnd();
    const retries = new Events<Retry>();
    const requests = new Events<string>();
    const feed = client({
      backoff: { initialMs: 10, maxMs: 100 },
      onRetry: (retry) => retries.push(retry),
      fetch: fetchTelling(requests),
    });
    const stop = new AbortController();
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const follow = collect(feed.follow({ after, orgId: tenant.orgId, signal: stop.signal }), (_, seen) =>
      seen === 3 ? held : undefined,
    );

    await createUsers(tenant, ['u1', 'u2', 'u3']);
    await follow.count(3);
    // Written while the loop is busy with its third change; then scimd stops: nobody read these.
    await createUsers(tenant, ['u4', 'u5']);
    await scimd.stop();
    release();
    await retries.count(1);
    await scimd.start();
    await follow.count(5);
    await createUsers(tenant, ['u6']);
    await follow.count(6);

    // Stopped again once the follower asks for what comes after u6: scimd answers its long poll, then goes.
    const sixth = follow.changes[5]!.cursor;
    await requests.until((urls) => urls.some((url) => new URL(url).searchParams.get('after') === sixth));
    const retried = retries.items.length;
    await scimd.stop();
    await retries.count(retried + 1);
    await scimd.start();
    await createUsers(tenant, ['u7']);
    await follow.count(7);
    stop.abort();
    await follow.ended;

    expect(userNames(follow.changes)).toEqual(['u1', 'u2', 'u3', 'u4', 'u5', 'u6', 'u7']);
    const { changes } = await readToEnd(client(), { after, orgId: tenant.orgId });
    expect(follow.changes.map((c) => c.id)).toEqual(changes.map((c) => c.id));
    // What was first retried is the refused connection.
    expect(retries.items[0]).toMatchObject({ attempt: 1, status: undefined, error: expect.any(Error) });
  }, 120_000);
});

describe('what is retried, and what is thrown', () => {
  it('waits as Retry-After says on 503, in seconds or as a date, and backs off with jitter without it', async () => {
    const tenant = await admin().tenant('retry-after');
    const after = await feedEnd();
    await createUsers(tenant, ['patient@acme.example']);
    const front = await startFront();
    try {
      const now = Date.parse('2026-11-28T10:00:00Z');
      const slept: number[] = [];
      const retries: Retry[] = [];
      const feed = new FeedClient({
        url: front.url,
        apiKey,
        now: () => now,
        sleep: async (ms) => {
          slept.push(ms);
        },
        onRetry: (retry) => retries.push(retry),
      });
      front.script.push(
        { status: 503, headers: { 'retry-after': '2' } },
        { status: 503, headers: { 'retry-after': new Date(now + 3000).toUTCString() } },
        { status: 502 },
      );
      const page = await feed.read({ after, orgId: tenant.orgId });

      expect(userNames(page.changes)).toEqual(['patient@acme.example']);
      expect(retries.map((r) => [r.attempt, r.status])).toEqual([
        [1, 503],
        [2, 503],
        [3, 502],
      ]);
      expect(slept.slice(0, 2)).toEqual([2000, 3000]);
      // No Retry-After on the third: the upper half of 500 ms doubled twice.
      expect(slept[2]).toBeGreaterThanOrEqual(1000);
      expect(slept[2]).toBeLessThanOrEqual(2000);
      expect(front.requests.items).toHaveLength(4);
    } finally {
      await front.close();
    }
  });

  it('throws AccessDenied for a wrong key, without retrying, and for a key revoked while it follows', async () => {
    const wrongRequests = new Events<string>();
    const wrong = new FeedClient({
      url: scimd.origin,
      apiKey: 'scimdkey_wrong',
      fetch: fetchTelling(wrongRequests),
    });
    const refused = await wrong.read().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AccessDenied);
    expect(refused).toMatchObject({ status: 401, code: 'unauthorized', name: 'AccessDenied' });
    expect(wrongRequests.items).toHaveLength(1);

    const quiet = await admin().tenant('revoked');
    const key = await createApiKey('revoked soon');
    const after = await feedEnd();
    const requests = new Events<string>();
    const feed = new FeedClient({ url: scimd.origin, apiKey: key.key, fetch: fetchTelling(requests) });
    // Short waits: a revocation that comes between the key's check and the wait is found when the wait ends.
    const thrown = thrownBy(feed.follow({ after, orgId: quiet.orgId, wait: 1 }));
    await requests.count(1);
    expect((await admin().admin('POST', `/api-keys/${key.id}/revoke`, {})).status).toBe(200);
    const revoked = await thrown;
    expect(revoked).toBeInstanceOf(AccessDenied);
    expect(revoked).toMatchObject({ status: 401, code: 'unauthorized' });
  });

  it('throws AccessDenied on 403 and a FeedError on another refusal, retrying neither', async () => {
    const front = await startFront();
    try {
      const message = 'An API key may only read the change feed (GET /admin/v1/changes)';
      front.script.push({ status: 403, body: { error: { code: 'forbidden', message } } });
      const forbidden = await new FeedClient({ url: front.url, apiKey })
        .read()
        .catch((error: unknown) => error);
      expect(forbidden).toBeInstanceOf(AccessDenied);
      expect(forbidden).toMatchObject({ status: 403, code: 'forbidden', message });
      expect(front.requests.items).toHaveLength(1);
    } finally {
      await front.close();
    }
    // A cursor this feed never gave.
    const ahead = await client()
      .read({ after: '999999999999' })
      .catch((error: unknown) => error);
    expect(ahead).toBeInstanceOf(FeedError);
    expect(ahead).not.toBeInstanceOf(CursorExpired);
    expect(ahead).toMatchObject({ status: 400, code: 'invalid_request' });
    expect((ahead as Error).message).toMatch(/past the end of this feed/);
  });
});

describe('stopping', () => {
  it('ends the loop, without an error, when the signal aborts during a long poll', async () => {
    const tenant = await admin().tenant('quiet');
    const after = await feedEnd();
    const requests = new Events<string>();
    const stop = new AbortController();
    const follower = client({ fetch: fetchTelling(requests) }).follow({
      after,
      orgId: tenant.orgId,
      wait: 30,
      signal: stop.signal,
    });
    const follow = collect(follower);
    await requests.count(1);
    stop.abort();
    // Before the test's time is up, which is well before the 30 s wait would have ended.
    await follow.ended;
    expect(follow.changes).toEqual([]);
    expect(follower.cursor).toBe(after);
    expect(requests.items).toHaveLength(1);
    // read() cannot end without a page: it rejects with the signal's reason.
    await expect(client().read({ signal: AbortSignal.abort() })).rejects.toMatchObject({
      name: 'AbortError',
    });
  }, 10_000);

  it('ends the loop when the signal aborts while it waits to retry', async () => {
    const front = await startFront();
    try {
      front.script.push({ status: 503, headers: { 'retry-after': '3600' } });
      const retries = new Events<Retry>();
      const stop = new AbortController();
      const feed = new FeedClient({ url: front.url, apiKey, onRetry: (retry) => retries.push(retry) });
      const follow = collect(feed.follow({ signal: stop.signal }));
      await retries.count(1);
      expect(retries.items[0]).toMatchObject({ attempt: 1, status: 503, delayMs: 3_600_000 });
      stop.abort();
      await follow.ended;
      expect(front.requests.items).toHaveLength(1);
    } finally {
      await front.close();
    }
  }, 10_000);
});

describe('retention', () => {
  it('throws CursorExpired for a cursor past it; following from the end after a resynchronisation goes on', async () => {
    const tenant = await admin().tenant('retention');
    const before = await feedEnd();
    await createUsers(tenant, ['old@acme.example']);
    const { changes } = await readToEnd(client(), { after: before });
    const newest = changes.at(-1)!;
    // Everything in the feed is past a retention period that ends a day after its newest change.
    await scimd.stop();
    const removed = await scimd.offline((db) =>
      new ChangeFeed(db).purge(
        new Date(Date.parse(newest.occurredAt) + (DEFAULT_RETENTION_DAYS + 1) * DAY_MS),
      ),
    );
    expect(removed).toBeGreaterThan(0);
    await scimd.start();

    const expired = await thrownBy(client().follow({ after: before }));
    expect(expired).toBeInstanceOf(CursorExpired);
    expect(expired).toMatchObject({ status: 410, code: 'cursor_expired', cursor: before });

    // The resynchronisation of docs/building-on-scimd.md: the feed's end first, then the read model
    // (nothing to copy here), then follow from that end.
    const end = await feedEnd();
    const stop = new AbortController();
    const follow = collect(client().follow({ after: end, orgId: tenant.orgId, signal: stop.signal }));
    await createUsers(tenant, ['new@acme.example']);
    await follow.count(1);
    stop.abort();
    await follow.ended;
    expect(userNames(follow.changes)).toEqual(['new@acme.example']);
  }, 120_000);
});
