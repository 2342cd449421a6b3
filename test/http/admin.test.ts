import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { wallClockPast } from '../helpers/clock.js';
import { ADMIN_TOKEN, type Harness, PUBLIC_URL, useHarness } from '../helpers/harness.js';
import { expectAdminError } from '../helpers/scim.js';

let harness: Harness;
useHarness((h) => {
  harness = h;
});

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UNKNOWN_ORG = '00000000-0000-4000-8000-000000000000';

async function createOrg(body: Record<string, unknown> = { name: 'Acme' }) {
  const res = await harness.admin('post', '/orgs').send(body).expect(201);
  return res.body;
}

describe('POST /admin/v1/orgs', () => {
  it('creates an organization: 201 with exactly the Org shape and the defaults', async () => {
    const res = await harness.admin('post', '/orgs').send({ name: 'Acme Corp' }).expect(201);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Acme Corp',
      scimBaseUrl: `${PUBLIC_URL}/scim/v2/${res.body.id}`,
      groupSync: false,
      deprovisioning: 'deactivate',
      createdAt: expect.stringMatching(ISO),
      updatedAt: res.body.createdAt,
    });
    expect(Math.abs(Date.parse(res.body.createdAt) - Date.now())).toBeLessThan(60_000);
  });

  it('takes groupSync and deprovisioning when given', async () => {
    const org = await createOrg({ name: 'Globex', groupSync: true, deprovisioning: 'delete' });
    expect(org).toMatchObject({ name: 'Globex', groupSync: true, deprovisioning: 'delete' });
    const again = await harness.admin('get', `/orgs/${org.id}`).expect(200);
    expect(again.body).toEqual(org);
  });

  it.each(['deactivate', 'anonymize', 'delete'])('accepts deprovisioning %s', async (mode) => {
    const org = await createOrg({ name: `Mode ${mode}`, deprovisioning: mode });
    expect(org.deprovisioning).toBe(mode);
  });

  it.each<[string, unknown]>([
    ['a missing name', { groupSync: true }],
    ['an empty name', { name: '' }],
    ['a blank name', { name: '   ' }],
    ['a name that is not a string', { name: 42 }],
    ['an unknown field', { name: 'Acme', colour: 'blue' }],
    ['deprovisioning "wipe"', { name: 'Acme', deprovisioning: 'wipe' }],
    ['groupSync "yes"', { name: 'Acme', groupSync: 'yes' }],
    ['an array body', [{ name: 'Acme' }]],
  ])('answers 400 invalid_request for %s', async (_, body) => {
    const before = (await harness.admin('get', '/orgs').expect(200)).body.orgs.length;
    const res = await harness.admin('post', '/orgs').send(body as object);
    expectAdminError(res, 400, 'invalid_request');
    const after = (await harness.admin('get', '/orgs').expect(200)).body.orgs.length;
    expect(after).toBe(before);
  });

  it('answers 400 invalid_request for malformed JSON', async () => {
    const res = await harness
      .admin('post', '/orgs')
      .set('Content-Type', 'application/json')
      .send('{"name": "Acme",');
    expectAdminError(res, 400, 'invalid_request');
  });

  it('answers 415 for a text/plain body', async () => {
    const res = await harness.admin('post', '/orgs').set('Content-Type', 'text/plain').send('name=Acme');
    expectAdminError(res, 415, 'unsupported_media_type');
  });
});

describe('GET /admin/v1/orgs and /admin/v1/orgs/{id}', () => {
  it('lists organizations, the new one included, each in the Org shape', async () => {
    const org = await createOrg({ name: 'Listed' });
    const res = await harness.admin('get', '/orgs').expect(200);
    expect(Object.keys(res.body)).toEqual(['orgs']);
    expect(res.body.orgs).toContainEqual(org);
    for (const o of res.body.orgs) {
      expect(Object.keys(o).sort()).toEqual(
        ['createdAt', 'deprovisioning', 'groupSync', 'id', 'name', 'scimBaseUrl', 'updatedAt'].sort(),
      );
      expect(o.scimBaseUrl).toBe(`${PUBLIC_URL}/scim/v2/${o.id}`);
    }
  });

  it('gets one organization by id', async () => {
    const org = await createOrg({ name: 'Fetched' });
    const res = await harness.admin('get', `/orgs/${org.id}`).expect(200);
    expect(res.body).toEqual(org);
  });

  it.each([
    ['an unknown uuid', UNKNOWN_ORG],
    ['a non-uuid id', 'not-a-uuid'],
    ['a numeric id', '12345'],
  ])('answers 404 not_found for %s', async (_, id) => {
    const res = await harness.admin('get', `/orgs/${id}`);
    expectAdminError(res, 404, 'not_found');
  });
});

describe('PATCH /admin/v1/orgs/{id}', () => {
  it.each<[string, Record<string, unknown>]>([
    ['name', { name: 'Renamed' }],
    ['groupSync', { groupSync: true }],
    ['deprovisioning', { deprovisioning: 'anonymize' }],
  ])('changes %s only; updatedAt moves, createdAt does not', async (_, change) => {
    const org = await createOrg({ name: 'Before' });
    // The service stamps with the wall clock: once it has ticked past the creation, a PATCH that
    // left updatedAt alone shows.
    await wallClockPast(org.updatedAt);
    const res = await harness.admin('patch', `/orgs/${org.id}`).send(change).expect(200);
    expect(res.body).toEqual({ ...org, ...change, updatedAt: expect.stringMatching(ISO) });
    expect(res.body.createdAt).toBe(org.createdAt);
    expect(Date.parse(res.body.updatedAt)).toBeGreaterThan(Date.parse(org.updatedAt));
    const stored = await harness.admin('get', `/orgs/${org.id}`).expect(200);
    expect(stored.body).toEqual(res.body);
  });

  it('changes several fields at once', async () => {
    const org = await createOrg({ name: 'Multi' });
    const res = await harness
      .admin('patch', `/orgs/${org.id}`)
      .send({ name: 'Multi 2', groupSync: true, deprovisioning: 'delete' })
      .expect(200);
    expect(res.body).toMatchObject({
      id: org.id,
      name: 'Multi 2',
      groupSync: true,
      deprovisioning: 'delete',
    });
  });

  it.each<[string, unknown]>([
    ['an empty body', {}],
    ['an empty name', { name: '' }],
    ['an unknown field', { nme: 'typo' }],
    ['deprovisioning "wipe"', { deprovisioning: 'wipe' }],
    ['groupSync "yes"', { groupSync: 'yes' }],
  ])('answers 400 invalid_request for %s and changes nothing', async (_, body) => {
    const org = await createOrg({ name: 'Unchanged' });
    const res = await harness.admin('patch', `/orgs/${org.id}`).send(body as object);
    expectAdminError(res, 400, 'invalid_request');
    expect((await harness.admin('get', `/orgs/${org.id}`).expect(200)).body).toEqual(org);
  });

  it.each([UNKNOWN_ORG, 'not-a-uuid'])('answers 404 not_found for org %s', async (id) => {
    const res = await harness.admin('patch', `/orgs/${id}`).send({ name: 'Ghost' });
    expectAdminError(res, 404, 'not_found');
  });
});

describe('admin routing', () => {
  it('answers 405 with an Allow header for DELETE /admin/v1/orgs', async () => {
    const res = await harness.admin('delete', '/orgs');
    expectAdminError(res, 405, 'method_not_allowed');
    const allowed = (res.headers.allow ?? '').split(/,\s*/);
    expect(allowed).toEqual(expect.arrayContaining(['GET', 'POST']));
    expect(allowed).not.toContain('DELETE');
  });

  it('answers 405 with an Allow header for PUT /admin/v1/orgs/{id}', async () => {
    const org = await createOrg({ name: 'Put' });
    const res = await harness.admin('put', `/orgs/${org.id}`).send({ name: 'x' });
    expectAdminError(res, 405, 'method_not_allowed');
    expect((res.headers.allow ?? '').split(/,\s*/)).toEqual(expect.arrayContaining(['GET', 'PATCH']));
  });

  it.each(['/nope', '/orgs/x/y/z', ''])(
    'answers 404 not_found for the unknown admin path "/admin/v1%s"',
    async (path) => {
      const res = await harness.admin('get', path);
      expectAdminError(res, 404, 'not_found');
    },
  );
});

describe('admin authentication', () => {
  let scimSecret: string;
  beforeAll(async () => {
    const org = await harness.createOrg({ name: 'Auth' });
    scimSecret = await harness.createToken(org.id);
  });

  const cases: [string, () => string | undefined][] = [
    ['no Authorization header', () => undefined],
    ['a wrong token', () => 'Bearer wrong-admin-token-9876543210'],
    ['the admin token as Basic', () => `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}`],
    ['the admin token without a scheme', () => ADMIN_TOKEN],
    ['a SCIM token', () => `Bearer ${scimSecret}`],
  ];

  it.each(cases)('answers 401 with WWW-Authenticate for %s, echoing no secret', async (_, header) => {
    const presented = header();
    for (const [method, path] of [
      ['get', '/orgs'],
      ['post', '/orgs'],
      ['get', '/nope'],
    ] as const) {
      const req = harness.http[method](`/admin/v1${path}`);
      if (presented !== undefined) req.set('Authorization', presented);
      const res = method === 'post' ? await req.send({ name: 'Intruder' }) : await req;
      expectAdminError(res, 401, 'unauthorized');
      expect(res.headers['www-authenticate']).toMatch(/^Bearer\b/);
      expect(res.text).not.toContain(ADMIN_TOKEN);
      expect(res.text).not.toContain(scimSecret);
      if (presented) expect(res.text).not.toContain(presented.replace(/^\w+\s+/, ''));
    }
    const orgs = (await harness.admin('get', '/orgs').expect(200)).body.orgs;
    expect(orgs.map((o: { name: string }) => o.name)).not.toContain('Intruder');
  });
});

describe('tokens', () => {
  let org: { id: string; createdAt: string };
  beforeAll(async () => {
    org = await createOrg({ name: 'Tokens' });
  });

  it('creates a token: 201 with the Token shape, the default scopes and the secret', async () => {
    const res = await harness.admin('post', `/orgs/${org.id}/tokens`).send({ name: 'Okta' }).expect(201);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Okta',
      scopes: ['users', 'groups'],
      prefix: expect.any(String),
      createdAt: expect.stringMatching(ISO),
      expiresAt: null,
      revokedAt: null,
      lastUsedAt: null,
      // Beyond the token's original fields: when it last served a request that succeeded (rotation guard).
      lastSuccessAt: null,
      replaces: null,
      replacedBy: null,
      token: expect.any(String),
    });
    const secret: string = res.body.token;
    expect(secret).toMatch(/^scimd_[A-Za-z0-9_-]{43,}$/);
    // >= 256 bits of base64url after the prefix
    expect(Buffer.from(secret.slice('scimd_'.length), 'base64url').length).toBeGreaterThanOrEqual(32);
    expect(res.body.prefix.length).toBeGreaterThan('scimd_'.length);
    expect(res.body.prefix.length).toBeLessThan(secret.length - 32);
    expect(secret.startsWith(res.body.prefix)).toBe(true);
  });

  it('creates a token with a body-less request, naming it by default', async () => {
    const res = await harness.admin('post', `/orgs/${org.id}/tokens`).expect(201);
    expect(res.body.name).toEqual(expect.any(String));
    expect(res.body.name.length).toBeGreaterThan(0);
    expect(res.body.scopes).toEqual(['users', 'groups']);
  });

  it('gives every token a different secret', async () => {
    const a = await harness.createToken(org.id);
    const b = await harness.createToken(org.id);
    expect(a).not.toBe(b);
  });

  it('lists tokens without the token field or any secret', async () => {
    const created = await harness
      .admin('post', `/orgs/${org.id}/tokens`)
      .send({ name: 'Listed' })
      .expect(201);
    const { token: secret, ...view } = created.body;
    const res = await harness.admin('get', `/orgs/${org.id}/tokens`).expect(200);
    expect(Object.keys(res.body)).toEqual(['tokens']);
    expect(res.body.tokens).toContainEqual(view);
    for (const t of res.body.tokens) {
      expect(t).not.toHaveProperty('token');
      expect(t).not.toHaveProperty('secret');
      expect(t).not.toHaveProperty('secretHash');
    }
    expect(res.text).not.toContain(secret);
    expect(res.text).not.toContain(secret.slice('scimd_'.length + 8));
    expect(res.text).not.toContain(createHash('sha256').update(secret).digest('hex'));
  });

  it('lists only the tokens of that organization', async () => {
    const other = await createOrg({ name: 'Other' });
    const mine = await harness.admin('post', `/orgs/${other.id}/tokens`).send({ name: 'Mine' }).expect(201);
    const res = await harness.admin('get', `/orgs/${other.id}/tokens`).expect(200);
    expect(res.body.tokens.map((t: { id: string }) => t.id)).toEqual([mine.body.id]);
    const first = await harness.admin('get', `/orgs/${org.id}/tokens`).expect(200);
    expect(first.body.tokens.map((t: { id: string }) => t.id)).not.toContain(mine.body.id);
  });

  it('stores SHA-256 of the secret and never the secret itself', async () => {
    const res = await harness.admin('post', `/orgs/${org.id}/tokens`).send({ name: 'Hashed' }).expect(201);
    const secret: string = res.body.token;
    const row = await harness.database.db
      .selectFrom('scim_tokens')
      .selectAll()
      .where('id', '=', res.body.id)
      .executeTakeFirstOrThrow();
    const expected = createHash('sha256').update(secret, 'utf8').digest();
    expect(Buffer.from(row.secret_hash).equals(expected)).toBe(true);
    expect(row.org_id).toBe(org.id);
    expect(row.prefix).toBe(res.body.prefix);
    const tail = secret.slice(row.prefix.length);
    for (const [column, value] of Object.entries(row)) {
      const texts =
        value instanceof Uint8Array
          ? [Buffer.from(value).toString('utf8'), Buffer.from(value).toString('hex')]
          : [JSON.stringify(value) ?? String(value)];
      for (const text of texts) {
        expect(text, column).not.toContain(secret);
        expect(text, column).not.toContain(tail);
      }
    }
  });

  it.each([[['users']], [['groups']], [['groups', 'users']]])('accepts scopes %j', async (scopes) => {
    const res = await harness.admin('post', `/orgs/${org.id}/tokens`).send({ scopes }).expect(201);
    expect(res.body.scopes).toEqual(scopes);
  });

  it('accepts an expiresAt in the future and returns it', async () => {
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const res = await harness.admin('post', `/orgs/${org.id}/tokens`).send({ expiresAt }).expect(201);
    expect(res.body.expiresAt).toBe(expiresAt);
  });

  it('accepts an expiresAt with an offset', async () => {
    const res = await harness
      .admin('post', `/orgs/${org.id}/tokens`)
      .send({ expiresAt: '2099-01-01T12:00:00+02:00' })
      .expect(201);
    expect(res.body.expiresAt).toBe('2099-01-01T10:00:00.000Z');
  });

  it.each<[string, unknown]>([
    ['scopes []', { scopes: [] }],
    ["scopes ['admin']", { scopes: ['admin'] }],
    ['duplicate scopes', { scopes: ['users', 'users'] }],
    ['scopes as a string', { scopes: 'users' }],
    ['expiresAt in the past', { expiresAt: new Date(Date.now() - 60_000).toISOString() }],
    ['expiresAt not ISO-8601', { expiresAt: 'next tuesday' }],
    ['expiresAt as a date only', { expiresAt: '2099-01-01' }],
    ['expiresAt as a number', { expiresAt: 4102444800000 }],
    ['an empty name', { name: '' }],
    ['an unknown field', { name: 'x', token: 'scimd_chosen-by-me' }],
  ])('answers 400 invalid_request for %s and creates nothing', async (_, body) => {
    const before = (await harness.admin('get', `/orgs/${org.id}/tokens`).expect(200)).body.tokens.length;
    const res = await harness.admin('post', `/orgs/${org.id}/tokens`).send(body as object);
    expectAdminError(res, 400, 'invalid_request');
    expect(res.text).not.toContain('scimd_chosen-by-me');
    const after = (await harness.admin('get', `/orgs/${org.id}/tokens`).expect(200)).body.tokens.length;
    expect(after).toBe(before);
  });

  it.each([UNKNOWN_ORG, 'not-a-uuid'])('answers 404 not_found for tokens of org %s', async (id) => {
    expectAdminError(await harness.admin('post', `/orgs/${id}/tokens`).send({}), 404, 'not_found');
    expectAdminError(await harness.admin('get', `/orgs/${id}/tokens`), 404, 'not_found');
  });

  it('sets lastUsedAt once the token is used on a SCIM request', async () => {
    const own = await createOrg({ name: 'Used' });
    const created = await harness.admin('post', `/orgs/${own.id}/tokens`).send({ name: 'Used' }).expect(201);
    const listed = async () =>
      (await harness.admin('get', `/orgs/${own.id}/tokens`).expect(200)).body.tokens.find(
        (t: { id: string }) => t.id === created.body.id,
      );
    expect((await listed()).lastUsedAt).toBeNull();
    const before = Date.now();
    await harness.http
      .get(`/scim/v2/${own.id}/Users`)
      .set('Authorization', `Bearer ${created.body.token}`)
      .expect(200);
    const used = await listed();
    expect(used.lastUsedAt).toMatch(ISO);
    expect(Date.parse(used.lastUsedAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(used.lastUsedAt)).toBeLessThanOrEqual(Date.now() + 1000);
  });

  it('does not set lastUsedAt when the token is presented to another organization', async () => {
    const own = await createOrg({ name: 'Unused' });
    const created = await harness.admin('post', `/orgs/${own.id}/tokens`).send({}).expect(201);
    const elsewhere = await createOrg({ name: 'Elsewhere' });
    await harness.http
      .get(`/scim/v2/${elsewhere.id}/Users`)
      .set('Authorization', `Bearer ${created.body.token}`)
      .expect(401);
    const tokens = (await harness.admin('get', `/orgs/${own.id}/tokens`).expect(200)).body.tokens;
    expect(tokens[0].lastUsedAt).toBeNull();
  });
});

describe('text Postgres cannot store', () => {
  const NUL = 'a\u0000b';
  const LONE = 'a\ud800b';

  it('is a 400 naming the field in every stored text field of the admin API, never a 500', async () => {
    const org = await createOrg({ name: 'Texts' });
    const attempts: [string, 'post' | 'patch' | 'put' | 'get', string, unknown][] = [
      [
        'webhook url',
        'post',
        '/webhooks',
        { url: `https://hooks.example.com/${NUL}`, events: ['user.created'] },
      ],
      [
        'webhook description',
        'post',
        '/webhooks',
        { url: 'https://hooks.example.com/', events: ['user.created'], description: LONE },
      ],
      ['token name', 'post', `/orgs/${org.id}/tokens`, { name: NUL }],
      ['api key name', 'post', '/api-keys', { name: NUL }],
      ['setup link note', 'post', `/orgs/${org.id}/setup-links`, { note: NUL }],
      ['org name', 'patch', `/orgs/${org.id}`, { name: LONE }],
      [
        'schema description',
        'put',
        `/orgs/${org.id}/schemas/urn:acme:texts`,
        {
          id: 'urn:acme:texts',
          resourceType: 'User',
          description: NUL,
          attributes: [{ name: 'x', type: 'string' }],
        },
      ],
      ['an unknown key', 'post', `/orgs/${org.id}/tokens`, { [NUL]: 1 }],
    ];
    for (const [what, method, path, body] of attempts) {
      const res = await harness.admin(method, path).send(body as object);
      expect([what, res.status, res.body.error?.code]).toEqual([what, 400, 'invalid_request']);
      expect(res.body.error.message).toMatch(/NUL characters or unpaired surrogates/);
    }
    const hook = await harness
      .admin('post', '/webhooks')
      .send({ url: 'https://hooks.example.com/ok', events: ['user.created'] })
      .expect(201);
    const patched = await harness
      .admin('patch', `/webhooks/${hook.body.id}`)
      .send({ url: `https://hooks.example.com/${NUL}` });
    expect([patched.status, patched.body.error.message]).toEqual([
      400,
      expect.stringMatching(/^url: must not contain NUL/),
    ]);
  });

  it('is a 400 in a query or a path, too', async () => {
    const org = await createOrg({ name: 'Queries' });
    expectAdminError(
      await harness.admin('get', `/orgs/${org.id}/events?resourceId=a%00b`),
      400,
      'invalid_request',
    );
    // No schema has such a URN: 404 or 400, whichever the database answers first, never a 500.
    const schema = await harness.admin('get', `/orgs/${org.id}/schemas/urn:acme:a%00b`);
    expect([400, 404]).toContain(schema.status);
  });
});
