// What one request may make the database do, and the edges of the data: each answers a 4xx SCIM
// error that names the limit, or succeeds whole; none is a 500.
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { sql } from 'kysely';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { MAX_FILTER_TERMS } from '../../src/filter/parse.js';
import { createHttpServer } from '../../src/http/server.js';
import { INDEXED_STRING_MAX_LENGTH, STRING_MAX_LENGTH } from '../../src/schema/attribute.js';
import { insertUsers } from '../helpers/groups.js';
import { ADMIN_TOKEN, type Harness, PUBLIC_URL, type Tenant, useHarness } from '../helpers/harness.js';
import { patchOp, SCIM_ERROR, SCIM_JSON } from '../helpers/scim.js';

let harness: Harness;
let t: Tenant;
useHarness(async (h) => {
  harness = h;
  const org = await h.createOrg({ name: 'Limits', groupSync: true });
  const token = await h.createToken(org.id);
  t = await h.tenantOf(org.id, token);
});

/** Text of `n` characters that takes three bytes each in UTF-8: the worst case for an index entry. */
const wide = (n: number) => '中'.repeat(n);

function expectError(
  res: { status: number; body: Record<string, unknown> },
  status: number,
  scimType?: string,
) {
  expect(res.status).toBe(status);
  expect(res.body.schemas).toEqual([SCIM_ERROR]);
  if (scimType) expect(res.body.scimType).toBe(scimType);
}

describe('value lengths from the schema registry', () => {
  it.each([
    ['userName', (v: string) => ({ userName: v })],
    ['externalId', (v: string) => ({ userName: `ext-${v.length}@corp.example`, externalId: v })],
    ['emails.value', (v: string) => ({ userName: `mail-${v.length}@corp.example`, emails: [{ value: v }] })],
  ])(
    'an indexed %s: %i characters are stored, one more is 400 invalidValue naming the limit',
    async (_, body) => {
      const fits = await t.post('/Users', body(wide(INDEXED_STRING_MAX_LENGTH)));
      expect(fits.status).toBe(201);
      const over = await t.post('/Users', body(wide(INDEXED_STRING_MAX_LENGTH + 1)));
      expectError(over, 400, 'invalidValue');
      expect(over.body.detail).toMatch(new RegExp(`at most ${INDEXED_STRING_MAX_LENGTH} characters`));
      // A few kilobytes (too large for an index entry) were a 500.
      expectError(await t.post('/Users', body('x'.repeat(5000))), 400, 'invalidValue');
    },
  );

  it('other strings take up to 4,096 characters; a 900 KB displayName is 400', async () => {
    expect(
      (await t.post('/Users', { userName: 'long@corp.example', displayName: wide(STRING_MAX_LENGTH) }))
        .status,
    ).toBe(201);
    const over = await t.post('/Users', {
      userName: 'longer@corp.example',
      displayName: 'x'.repeat(900_000),
    });
    expectError(over, 400, 'invalidValue');
    expect(over.body.detail).toMatch(/displayName .*at most 4096 characters/);
  });

  it('PUT and PATCH are held to the same limits', async () => {
    const user = (await t.post('/Users', { userName: 'patched@corp.example' })).body;
    expectError(await t.put(`/Users/${user.id}`, { userName: 'x'.repeat(600) }), 400, 'invalidValue');
    expectError(
      await t.patch(
        `/Users/${user.id}`,
        patchOp({ op: 'replace', path: 'userName', value: 'x'.repeat(600) }),
      ),
      400,
      'invalidValue',
    );
    expectError(
      await t.patch(`/Users/${user.id}`, patchOp({ op: 'add', path: 'title', value: 'x'.repeat(5000) })),
      400,
      'invalidValue',
    );
    expect((await t.get(`/Users/${user.id}`)).body.userName).toBe('patched@corp.example');
  });

  it("a group's displayName, externalId and a member's display are bounded too", async () => {
    const member = (await t.post('/Users', { userName: 'member@corp.example' })).body;
    expectError(await t.post('/Groups', { displayName: 'x'.repeat(600) }), 400, 'invalidValue');
    expectError(
      await t.post('/Groups', { displayName: 'G1', externalId: 'x'.repeat(600) }),
      400,
      'invalidValue',
    );
    expectError(
      await t.post('/Groups', {
        displayName: 'G2',
        members: [{ value: member.id, display: 'x'.repeat(5000) }],
      }),
      400,
      'invalidValue',
    );
    const group = (await t.post('/Groups', { displayName: 'G3' })).body;
    const patched = await t.patch(
      `/Groups/${group.id}`,
      patchOp({ op: 'add', path: 'members', value: [{ value: member.id, display: 'x'.repeat(5000) }] }),
    );
    expectError(patched, 400, 'invalidValue');
    expect(patched.body.detail).toMatch(/members\[0\]\.display must be at most 4096 characters/);
    expectError(
      await t.patch(
        `/Groups/${group.id}`,
        patchOp({ op: 'add', path: 'members', value: [{ value: member.id, display: 'nul\u0000' }] }),
      ),
      400,
      'invalidValue',
    );
  });
});

describe('filters', () => {
  const terms = (n: number) => Array.from({ length: n }, (_, i) => `displayName co "x${i}"`).join(' or ');

  it(`takes up to ${MAX_FILTER_TERMS} comparisons; one more is 400 invalidFilter naming the limit`, async () => {
    expect((await t.get(`/Users?filter=${encodeURIComponent(terms(MAX_FILTER_TERMS))}`)).status).toBe(200);
    const over = await t.get(`/Users?filter=${encodeURIComponent(terms(MAX_FILTER_TERMS + 1))}`);
    expectError(over, 400, 'invalidFilter');
    expect(over.body.detail).toMatch(new RegExp(`more than ${MAX_FILTER_TERMS} comparisons`));
    expectError(await t.post('/Users/.search', { filter: terms(250) }), 400, 'invalidFilter');
  });
});

describe('paging', () => {
  it('a startIndex far past the end answers an empty page with the exact total', async () => {
    const total = (await t.get('/Users?count=0')).body.totalResults;
    const res = await t.get('/Users?startIndex=9300000000000000000');
    expect(res.status).toBe(200);
    expect(res.body.totalResults).toBe(total);
    expect(res.body.Resources ?? []).toEqual([]);
    expect((await t.post('/Users/.search', { startIndex: 1e300 })).status).toBe(200);
  });
});

describe('bodies', () => {
  it('Content-Encoding gzip and deflate are read; another is 415; a body that is not what it claims is 400', async () => {
    const body = JSON.stringify({ userName: 'zipped@corp.example' });
    const raw = (encoding: string, data: Buffer | string) =>
      harness.http
        .post(`${t.basePath}/Users`)
        .set('Authorization', `Bearer ${t.token}`)
        .set('Content-Type', SCIM_JSON)
        .set('Content-Encoding', encoding)
        // As given: superagent would otherwise send a Buffer as JSON.
        .serialize((x) => x)
        .send(data);
    const zipped = await raw('gzip', gzipSync(body));
    expect(zipped.body).toEqual(expect.objectContaining({ userName: 'zipped@corp.example' }));
    expect(zipped.status).toBe(201);
    for (const encoding of ['br', 'compress', 'zstd', 'gzip, br']) {
      const res = await raw(encoding, body);
      expectError(res, 415);
      expect(res.body.detail).toMatch(/identity, gzip or deflate/);
    }
    expectError(await raw('gzip', 'not gzip at all'), 400, 'invalidSyntax');
    const admin = await harness.http
      .post('/admin/v1/orgs')
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'br')
      .send('{}');
    expect(admin.status).toBe(415);
    expect(admin.body.error.code).toBe('unsupported_media_type');
  });
});

describe('a group of tens of thousands of members in one request', () => {
  // As many members as fit in the 1 MB body ({"value":"<id>"} is 47 characters, plus a comma).
  const MEMBERS = 21_000;

  it('is stored whole by POST, replaced whole by PUT, and grown by PATCH', async () => {
    const org = await harness.createOrg({ name: 'Large', groupSync: true });
    const large = await harness.tenantOf(org.id, await harness.createToken(org.id));
    const ids = await insertUsers(harness.database.db, large.orgId, 'large', MEMBERS + 500);
    const count = async (groupId: string) =>
      Number(
        (
          await sql<{
            n: string;
          }>`select count(*) as n from group_members where group_id = ${groupId}`.execute(harness.database.db)
        ).rows[0]!.n,
      );
    const members = (list: string[]) => list.map((value) => ({ value }));
    const body = { displayName: 'Everyone', members: members(ids.slice(0, MEMBERS)) };
    expect(JSON.stringify(body).length).toBeLessThan(1024 * 1024);

    const created = await large.post('/Groups?excludedAttributes=members', body);
    expect(created.status).toBe(201);
    expect(await count(created.body.id)).toBe(MEMBERS);

    const replaced = await large.put(`/Groups/${created.body.id}?excludedAttributes=members`, {
      displayName: 'Everyone',
      members: members(ids.slice(500, MEMBERS + 500)),
    });
    expect(replaced.status).toBe(200);
    expect(await count(created.body.id)).toBe(MEMBERS);

    const second = (await large.post('/Groups', { displayName: 'Grown' })).body;
    const added = await large.patch(
      `/Groups/${second.id}`,
      patchOp({ op: 'add', path: 'members', value: members(ids.slice(0, MEMBERS)) }),
    );
    expect(added.status).toBe(204);
    expect(await count(second.id)).toBe(MEMBERS);
    const removed = await large.patch(
      `/Groups/${second.id}`,
      patchOp({ op: 'remove', path: 'members', value: members(ids.slice(0, MEMBERS - 1)) }),
    );
    expect(removed.status).toBe(204);
    expect(await count(second.id)).toBe(1);
  });
});

describe('a token without the groups scope', () => {
  it('sees no User.groups, and may not filter or sort on them (403)', async () => {
    const usersOnly = await harness.tenantOf(
      t.orgId,
      await harness.createToken(t.orgId, { scopes: ['users'] }),
    );
    const user = (await t.post('/Users', { userName: 'grouped@corp.example' })).body;
    const group = (await t.post('/Groups', { displayName: 'Secret project', members: [{ value: user.id }] }))
      .body;

    expect((await t.get(`/Users/${user.id}`)).body.groups).toEqual([
      expect.objectContaining({ value: group.id, display: 'Secret project' }),
    ]);
    const one = await usersOnly.get(`/Users/${user.id}`);
    expect(one.status).toBe(200);
    expect(one.body).not.toHaveProperty('groups');
    expect((await usersOnly.get(`/Users/${user.id}?attributes=groups`)).body).not.toHaveProperty('groups');
    const listed = await usersOnly.get(
      '/Users?filter=userName eq "grouped@corp.example"&attributes=groups,userName',
    );
    expect(listed.body.Resources[0]).not.toHaveProperty('groups');
    const patched = await usersOnly.patch(
      `/Users/${user.id}`,
      patchOp({ op: 'replace', path: 'title', value: 'x' }),
    );
    expect(patched.body).not.toHaveProperty('groups');

    for (const res of [
      await usersOnly.get(`/Users?filter=${encodeURIComponent(`groups.value eq "${group.id}"`)}`),
      await usersOnly.get(`/Users?filter=${encodeURIComponent('groups[display sw "Secret"]')}`),
      await usersOnly.get('/Users?sortBy=groups.display'),
      await usersOnly.post('/.search', { filter: 'groups pr' }),
    ]) {
      expectError(res, 403);
      expect(res.body.detail).toMatch(/may not read groups/);
    }
  });
});

describe('requests Node refuses before the app sees them', () => {
  /** The app on a real port, with short time limits; `send` writes raw bytes and reads the answer. */
  async function server() {
    const app = createApp({
      database: harness.database,
      publicUrl: PUBLIC_URL,
      adminToken: ADMIN_TOKEN,
      logger: pino({ level: 'silent' }),
    });
    const http = createHttpServer(app, { headersTimeoutMs: 300, requestTimeoutMs: 600 });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    const { port } = http.address() as AddressInfo;
    const send = (chunks: readonly (string | number)[]) =>
      new Promise<{ status: number; head: string; body: unknown; raw: string }>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1');
        let received = '';
        socket.on('data', (d) => (received += d.toString('utf8')));
        socket.on('error', reject);
        socket.on('close', () => {
          const [head, body] = received.split('\r\n\r\n');
          let parsed: unknown;
          try {
            parsed = body ? JSON.parse(body) : undefined;
          } catch {
            parsed = body;
          }
          resolve({ status: Number(head!.split(' ')[1]), head: head!, body: parsed, raw: received });
        });
        // Strings are written, numbers are pauses.
        void (async () => {
          for (const chunk of chunks) {
            if (typeof chunk === 'number') await new Promise((r) => setTimeout(r, chunk));
            else if (!socket.destroyed) socket.write(chunk);
          }
        })();
      });
    return { send, close: () => new Promise((resolve) => http.close(resolve)) };
  }

  it('a URL over 16 KB is 414 with a SCIM error that points to POST .search', async () => {
    const { send, close } = await server();
    try {
      const filter = encodeURIComponent(`userName eq "${'x'.repeat(20_000)}"`);
      const res = await send([`GET ${t.basePath}/Users?filter=${filter} HTTP/1.1\r\nHost: x\r\n\r\n`]);
      expect(res.status).toBe(414);
      expect(res.head).toMatch(/content-type: application\/scim\+json/i);
      expect(res.body).toEqual({
        schemas: [SCIM_ERROR],
        status: '414',
        detail: expect.stringMatching(/\/Users\/\.search/),
      });
      const admin = await send([`GET /admin/v1/orgs?x=${'y'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`]);
      expect(admin.status).toBe(414);
      expect(admin.body).toEqual({ error: { code: 'uri_too_long', message: expect.any(String) } });
    } finally {
      await close();
    }
  });

  it('headers over 16 KB are 431 with a SCIM error', async () => {
    const { send, close } = await server();
    try {
      const res = await send([
        `GET ${t.basePath}/Users HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`,
      ]);
      expect(res.status).toBe(431);
      expect(res.body).toEqual({ schemas: [SCIM_ERROR], status: '431', detail: expect.any(String) });
    } finally {
      await close();
    }
  });

  it('a client too slow with its headers or its body is answered 408 and cut off', async () => {
    const { send, close } = await server();
    try {
      const slowHeaders = await send([
        `GET ${t.basePath}/Users HTTP/1.1\r\n`,
        'Host: x\r\n',
        2_500,
        'X-Late: 1\r\n\r\n',
      ]);
      expect(slowHeaders.status).toBe(408);
      expect(slowHeaders.body).toEqual({ schemas: [SCIM_ERROR], status: '408', detail: expect.any(String) });
      const slowBody = await send([
        `POST ${t.basePath}/Users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.token}\r\n` +
          'Content-Type: application/scim+json\r\nContent-Length: 100\r\n\r\n{"userName":',
        2_500,
        '"late@corp.example"}',
      ]);
      expect(slowBody.status).toBe(408);
      // An idle keep-alive connection is not a slow client: its next request, late, is served.
      const reused = await send([
        `GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n`,
        2_500,
        `GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
      ]);
      expect(reused.raw.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(2);
    } finally {
      await close();
    }
  });
});
