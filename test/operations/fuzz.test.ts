// Random input at the HTTP surface, on both databases: filters, PATCH bodies, resource documents,
// headers and query parameters. Whatever arrives, the answer is never a 5xx: bad input is a 4xx.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, type Harness, type Tenant, useHarness } from '../helpers/harness.js';
import { ENTERPRISE } from '../helpers/scim.js';

let harness: Harness;
let t: Tenant;
let userId: string;
let groupId: string;
useHarness(async (h) => {
  harness = h;
  const org = await h.createOrg({ name: 'Fuzz', groupSync: true });
  t = await h.tenantOf(org.id, await h.createToken(org.id));
  userId = (
    await t.post('/Users', { userName: 'fuzz@corp.example', emails: [{ value: 'a@b.c', type: 'work' }] })
  ).body.id;
  groupId = (await t.post('/Groups', { displayName: 'Fuzzers', members: [{ value: userId }] })).body.id;
});

const RUNS = { numRuns: Number(process.env.FUZZ_RUNS ?? 150) };

/** Characters that have broken servers: quotes, escapes, wildcards, NUL, lone surrogates, emoji. */
const nasty = fc.constantFrom(
  '"',
  '\\',
  '%',
  '_',
  '\u0000',
  '\ud800',
  '\udfff',
  '😀',
  'é',
  ' ',
  '[',
  ']',
  '(',
  ')',
  '.',
  ':',
);
const text = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  {
    arbitrary: fc
      .array(fc.oneof(nasty, fc.string({ maxLength: 3 })), { maxLength: 12 })
      .map((a) => a.join('')),
    weight: 3,
  },
  fc.integer({ min: 0, max: 6000 }).map((n) => 'x'.repeat(n)),
);
const attributePath = fc.constantFrom(
  'userName',
  'displayName',
  'name.givenName',
  'emails',
  'emails.value',
  'emails.primary',
  'active',
  'groups',
  'groups.value',
  'meta.created',
  'meta.lastModified',
  'id',
  'externalId',
  'members',
  'members.value',
  'x509Certificates.value',
  `${ENTERPRISE}:manager.value`,
  `${ENTERPRISE}:employeeNumber`,
  'urn:unknown:Thing:attr',
  'nope',
);
const operator = fc.constantFrom('eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le', 'pr', 'EQ', 'xx');
const literal = fc.oneof(
  text.map((s) => JSON.stringify(s)),
  fc.constantFrom(
    'true',
    'False',
    'null',
    '1e400',
    '-0',
    '9300000000000000000',
    '"2026-01-01T00:00:00Z"',
    'bare',
  ),
  fc.double().map(String),
);
const { filter } = fc.letrec((tie) => ({
  filter: fc.oneof(
    { depthSize: 'small' },
    fc
      .tuple(attributePath, operator, literal)
      .map(([p, o, v]) => (o === 'pr' ? `${p} pr` : `${p} ${o} ${v}`)),
    fc.tuple(attributePath, tie('filter')).map(([p, f]) => `${p}[${f}]`),
    fc
      .tuple(tie('filter'), fc.constantFrom('and', 'or', 'AND'), tie('filter'))
      .map(([a, o, b]) => `${a} ${o} ${b}`),
    tie('filter').map((f) => `not (${f})`),
    tie('filter').map((f) => `(${f}`),
    text,
  ) as fc.Arbitrary<string>,
}));

/** Stands for the id of the tenant's user, filled in when a request is sent (members must exist). */
const USER_ID = '$user';
const memberList = fc.array(
  fc.record(
    {
      value: fc.oneof({ arbitrary: fc.constant(USER_ID), weight: 3 }, fc.uuid(), text),
      display: text,
      type: fc.constantFrom('User', 'Group'),
    },
    { requiredKeys: ['value'] },
  ),
  { maxLength: 3 },
);
const value = fc.oneof(fc.jsonValue({ maxDepth: 3 }), text, memberList);
const path = fc.oneof(
  attributePath,
  fc.tuple(attributePath, filter).map(([p, f]) => `${p}[${f}]`),
  fc
    .tuple(attributePath, filter, fc.constantFrom('value', 'display', 'type'))
    .map(([p, f, s]) => `${p}[${f}].${s}`),
  text,
);
const anyOperation = fc.record(
  {
    op: fc.constantFrom('add', 'replace', 'remove', 'Add', 'Replace', 'Remove', 'move', ''),
    path: fc.oneof(path, fc.constant(null), fc.integer()),
    value,
  },
  { requiredKeys: [] },
);
/** Well-formed operations with odd values: they reach the database rather than stop at the parser. */
const wellFormedOperation = fc.oneof(
  fc.record({
    op: fc.constantFrom('add', 'replace', 'remove'),
    path: fc.constantFrom('members', `members[value eq "${USER_ID}"]`),
    value: memberList,
  }),
  fc.record({
    op: fc.constantFrom('add', 'replace'),
    path: fc.constantFrom(
      'userName',
      'displayName',
      'title',
      'externalId',
      'emails',
      `${ENTERPRISE}:manager`,
    ),
    value: fc.oneof(text, fc.array(fc.record({ value: text }), { maxLength: 2 })),
  }),
);
const operation = fc.oneof(anyOperation, wellFormedOperation);
/** A body of one or two well-formed operations: each reaches the database. */
const wellFormedPatch = fc.record({
  schemas: fc.constant(['urn:ietf:params:scim:api:messages:2.0:PatchOp']),
  Operations: fc.array(wellFormedOperation, { minLength: 1, maxLength: 2 }),
});
const patchBody = fc.oneof(
  fc.record({
    schemas: fc.constant(['urn:ietf:params:scim:api:messages:2.0:PatchOp']),
    Operations: fc.array(operation, { maxLength: 4 }),
  }),
  fc.jsonValue({ maxDepth: 3 }),
);
const documentKey = fc.oneof(
  attributePath,
  fc.constantFrom('schemas', 'members', ENTERPRISE, 'password', 'meta'),
  text,
);
const document = fc.oneof(
  fc.dictionary(documentKey, value, { maxKeys: 6 }),
  // Every known attribute with a value that may not suit it.
  fc.record(
    {
      userName: text,
      displayName: text,
      externalId: text,
      active: value,
      emails: fc.array(fc.record({ value: text, type: text, primary: value }, { requiredKeys: [] }), {
        maxLength: 3,
      }),
      x509Certificates: fc.array(fc.record({ value: text }), { maxLength: 2 }),
      members: memberList,
      [ENTERPRISE]: fc.record(
        { manager: fc.oneof(text, fc.record({ value: text })), employeeNumber: text },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: [] },
  ),
  fc.jsonValue({ maxDepth: 3 }),
);

/** Percent-encoded as a client would (a lone surrogate cannot be: it goes as U+FFFD). */
const encode = (s: string) => encodeURIComponent(s.toWellFormed());
/** Percent escapes that do not decode: bad UTF-8, truncated, not hex. */
const badEscape = fc.constantFrom('%ED%A0%80', '%E0%A4%A', '%zz', '%', '%C0%AF', '%FF');

/** The body with USER_ID replaced by the tenant's user's id. */
const withUserId = (body: unknown): unknown =>
  body === undefined ? body : JSON.parse(JSON.stringify(body).replaceAll(USER_ID, userId));

function expectNo5xx(res: { status: number; text?: string }, what: string) {
  expect(res.status, `${what} -> ${res.status} ${res.text ?? ''}`).toBeLessThan(500);
}

describe('random input never gets a 5xx', () => {
  it('filters, on a list, a search and a group search', async () => {
    await fc.assert(
      fc.asyncProperty(filter, badEscape, async (f, bad) => {
        expectNo5xx(await t.get(`/Users?filter=${encode(f)}`), f);
        expectNo5xx(await t.get(`/Users?filter=${encode(f)}${bad}`), `${f} ${bad}`);
        expectNo5xx(await t.post('/Groups/.search', { filter: f, count: 5 }), f);
      }),
      RUNS,
    );
  });

  it('PATCH bodies, on a user and on a group', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(patchBody, wellFormedPatch), async (body) => {
        const sent = withUserId(body);
        const what = JSON.stringify(sent).slice(0, 500);
        expectNo5xx(await t.patch(`/Users/${userId}`, sent), what);
        expectNo5xx(await t.patch(`/Groups/${groupId}`, sent), what);
      }),
      RUNS,
    );
    expect((await t.get(`/Users/${userId}`)).status).toBe(200);
  });

  it('resource documents, created and replaced', async () => {
    await fc.assert(
      fc.asyncProperty(document, async (body) => {
        const sent = withUserId(body);
        const what = JSON.stringify(sent).slice(0, 500);
        expectNo5xx(await t.post('/Users', sent), what);
        expectNo5xx(await t.put(`/Users/${userId}`, sent), what);
        expectNo5xx(await t.post('/Groups', sent), what);
        expectNo5xx(await t.put(`/Groups/${groupId}`, sent), what);
      }),
      RUNS,
    );
  });

  it('query parameters', async () => {
    const number = fc.oneof(
      fc.integer().map(String),
      fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
      // Around the ends of a double's exact integers and of Postgres's bigint.
      fc.constantFrom(
        '9007199254740993',
        '9223372036854775807',
        '9223372036854775808',
        '9300000000000000000',
        '99999999999999999999',
      ),
      fc.constantFrom('', '-1', '0', '1e5', '1.5', ' 7 ', '0x10'),
    );
    const params = {
      startIndex: number,
      count: number,
      sortBy: fc.oneof(attributePath, text),
      sortOrder: fc.oneof(fc.constantFrom('ascending', 'DESCENDING'), text),
      attributes: fc.oneof(attributePath, text),
      excludedAttributes: fc.oneof(attributePath, text),
      cursor: fc.oneof(text, number),
      filter,
    };
    // One parameter at a time (a bad neighbour would answer 400 before the database is asked), or
    // several together.
    const query = fc.oneof(
      ...Object.entries(params).map(([name, arb]) =>
        arb.map((v) => ({ [name]: v }) as Record<string, string>),
      ),
      fc.record(params, { requiredKeys: [] }),
    );
    await fc.assert(
      fc.asyncProperty(
        query,
        fc.constantFrom('/Users', '/Groups', `/Users/${userId}`, `/Groups/${groupId}`),
        async (q, at) => {
          const search = new URLSearchParams(q).toString();
          expectNo5xx(await t.get(`${at}?${search}`), `${at}?${search}`);
        },
      ),
      RUNS,
    );
  });

  it('headers and bodies of every kind, on SCIM and admin writes', async () => {
    const header = fc.record(
      {
        'Content-Type': fc.constantFrom(
          'application/scim+json',
          'application/json; charset=latin1',
          'text/plain',
          'application/xml',
          '',
          'application/json;;;',
        ),
        'Content-Encoding': fc.constantFrom('gzip', 'deflate', 'identity', 'br', 'x-unknown', ''),
        Prefer: fc.oneof(text, fc.constantFrom('return=minimal', 'return=representation')),
        Accept: fc.oneof(text, fc.constant('application/scim+json')),
        'X-Request-Id': text,
      },
      { requiredKeys: [] },
    );
    const rawBody = fc.oneof(
      text,
      fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
    );
    await fc.assert(
      fc.asyncProperty(
        header,
        rawBody,
        fc.constantFrom('post', 'put', 'patch'),
        async (headers, body, method) => {
          const clean = Object.fromEntries(
            Object.entries(headers).filter(([, v]) => /^[\t\x20-\x7e]*$/.test(v as string)),
          ) as Record<string, string>;
          const path = method === 'post' ? '/Users' : `/Users/${userId}`;
          const scim = await harness.http[method](t.basePath + path)
            .set('Authorization', `Bearer ${t.token}`)
            .set(clean)
            .serialize((x) => x)
            .send(body);
          expectNo5xx(scim, `${method} ${JSON.stringify(clean)} ${body.slice(0, 200)}`);
          const admin = await harness.http
            .post('/admin/v1/orgs')
            .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
            .set(clean)
            .serialize((x) => x)
            .send(body);
          expectNo5xx(admin, `admin ${JSON.stringify(clean)} ${body.slice(0, 200)}`);
        },
      ),
      RUNS,
    );
  });

  it('credentials and organization ids', async () => {
    await fc.assert(
      fc.asyncProperty(text, fc.oneof(text, fc.uuid(), badEscape), async (credential, org) => {
        const clean = credential.replace(/[^\t\x20-\x7e]/g, '');
        const res = await harness.http
          .get(`/scim/v2/${encode(org)}/Users`)
          .set('Authorization', `Bearer ${clean}`);
        expectNo5xx(res, `${org} ${clean}`);
        expect([400, 401, 404]).toContain(res.status);
      }),
      RUNS,
    );
  });
});
