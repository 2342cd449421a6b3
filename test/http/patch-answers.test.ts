// What a PATCH /Users/{id} answers besides its change: Prefer and projection, 400 with the right
// scimType for every bad request (never a 500, nothing half-applied), and PATCH in
// ServiceProviderConfig.
import { describe, expect, it } from 'vitest';
import { type Harness, type Tenant, useHarness } from '../helpers/harness.js';
import { B, type Json, patchBody, uniqueName, userCalls } from '../helpers/patch-users.js';
import { ENTERPRISE, PATCH_OP, SCIM_ERROR, SCIM_JSON } from '../helpers/scim.js';

let harness: Harness;
let t: Tenant;
useHarness(async (h) => {
  harness = h;
  t = await harness.tenant();
});
const { createUser, getUser } = userCalls(() => t);

describe('PATCH /Users/{id}: Prefer and projection', () => {
  it('answers 204 with an empty body to Prefer: return=minimal, and applies the change', async () => {
    const created = await createUser({ userName: uniqueName(), ...B });
    const res = await t
      .patch(`/Users/${created.id}`, patchBody([{ op: 'replace', path: 'active', value: false }]))
      .set('Prefer', 'return=minimal')
      .expect(204);
    expect(res.text).toBe('');
    expect((await getUser(created.id)).active).toBe(false);
  });

  it('answers 200 with the user to Prefer: return=representation', async () => {
    const created = await createUser({ userName: uniqueName(), ...B });
    const res = await t
      .patch(`/Users/${created.id}`, patchBody([{ op: 'replace', path: 'title', value: 'Boss' }]))
      .set('Prefer', 'return=representation')
      .expect(200);
    expect(res.body).toEqual(await getUser(created.id));
  });

  it("answers with the user's groups whether the operations change something or not", async () => {
    await harness.admin('patch', `/orgs/${t.orgId}`).send({ groupSync: true }).expect(200);
    const created = await createUser({ userName: uniqueName(), ...B });
    const group = await t
      .post('/Groups', { displayName: uniqueName(), members: [{ value: created.id }] })
      .expect(201);
    const ops = patchBody([{ op: 'replace', path: 'title', value: 'Grouped' }]);
    for (const round of ['changes', 'changes nothing']) {
      const res = await t.patch(`/Users/${created.id}`, ops).expect(200);
      expect(res.body.groups, round).toEqual([expect.objectContaining({ value: group.body.id })]);
      expect(res.body).toEqual(await getUser(created.id));
    }
  });

  it('projects the answer with attributes and excludedAttributes', async () => {
    const created = await createUser({ userName: uniqueName(), ...B });
    const ops = patchBody([{ op: 'replace', path: 'displayName', value: 'Projected' }]);
    const only = await t.patch(`/Users/${created.id}?attributes=userName`, ops).expect(200);
    expect(only.headers['content-type']).toBe(SCIM_JSON);
    expect(only.body).toEqual({ schemas: created.schemas, id: created.id, userName: created.userName });
    const without = await t.patch(`/Users/${created.id}?excludedAttributes=emails,meta`, ops).expect(200);
    const { emails: _emails, meta: _meta, ...rest } = await getUser(created.id);
    expect(without.body).toEqual(rest);
    expect(rest.displayName).toBe('Projected');
  });

  it('answers 200 when attributes is given, even with Prefer: return=minimal (RFC 7644 §3.5.2 MUST)', async () => {
    const created = await createUser({ userName: uniqueName(), ...B });
    const res = await t
      .patch(
        `/Users/${created.id}?attributes=active`,
        patchBody([{ op: 'replace', path: 'active', value: false }]),
      )
      .set('Prefer', 'return=minimal');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ schemas: created.schemas, id: created.id, active: false });
  });
});

function rawPatch(id: unknown) {
  return harness.http.patch(`${t.basePath}/Users/${String(id)}`).set('Authorization', `Bearer ${t.token}`);
}

interface BadCase {
  name: string;
  send: (req: ReturnType<typeof rawPatch>, user: Json) => ReturnType<typeof rawPatch>;
  /** The scimType expected; a list where the RFC allows more than one reading. */
  scimType: string | string[];
  detail?: RegExp;
}

const json = (body: unknown) => (req: ReturnType<typeof rawPatch>) =>
  req.set('Content-Type', SCIM_JSON).send(JSON.stringify(body));
const ops = (...operations: unknown[]) => json({ schemas: [PATCH_OP], Operations: operations });

const badCases: BadCase[] = [
  // body and operation shape → invalidSyntax
  {
    name: 'a body that is not JSON',
    send: (r) => r.set('Content-Type', SCIM_JSON).send('{"Operations": ['),
    scimType: 'invalidSyntax',
  },
  {
    name: 'a JSON array body',
    send: json([{ op: 'replace', path: 'title', value: 'x' }]),
    scimType: 'invalidSyntax',
  },
  { name: 'a JSON string body', send: json('replace'), scimType: 'invalidSyntax' },
  {
    name: 'an empty body',
    send: (r) => r.set('Content-Type', SCIM_JSON).send(''),
    scimType: 'invalidSyntax',
  },
  {
    name: 'no Operations',
    send: json({ schemas: [PATCH_OP] }),
    scimType: 'invalidSyntax',
    detail: /Operations/,
  },
  {
    name: 'Operations not an array',
    send: json({ schemas: [PATCH_OP], Operations: { op: 'replace', path: 'title', value: 'x' } }),
    scimType: 'invalidSyntax',
  },
  {
    name: 'Operations null',
    send: json({ schemas: [PATCH_OP], Operations: null }),
    scimType: 'invalidSyntax',
  },
  {
    name: 'schemas not an array',
    send: json({ schemas: PATCH_OP, Operations: [] }),
    scimType: 'invalidSyntax',
  },
  {
    name: 'an operation that is a string',
    send: ops('replace'),
    scimType: 'invalidSyntax',
    detail: /Operations\[0\]/,
  },
  { name: 'an operation that is null', send: ops(null), scimType: 'invalidSyntax' },
  { name: 'an operation without op', send: ops({ path: 'title', value: 'x' }), scimType: 'invalidSyntax' },
  {
    name: 'op "bogus"',
    send: ops({ op: 'bogus', path: 'title', value: 'x' }),
    scimType: 'invalidSyntax',
    detail: /bogus/,
  },
  { name: 'op a number', send: ops({ op: 1, path: 'title', value: 'x' }), scimType: 'invalidSyntax' },
  { name: 'path a number', send: ops({ op: 'replace', path: 7, value: 'x' }), scimType: 'invalidSyntax' },
  {
    name: 'path an object',
    send: ops({ op: 'replace', path: { a: 1 }, value: 'x' }),
    scimType: 'invalidSyntax',
  },
  {
    name: 'the second operation malformed, after a valid one',
    send: ops({ op: 'replace', path: 'title', value: 'x' }, { op: 'bogus' }),
    scimType: 'invalidSyntax',
    detail: /Operations\[1\]/,
  },
  {
    // RFC 7644 §3.5.2.1/§3.5.2.3: add and replace MUST carry a value. Debatable scimType.
    name: 'add with a path and no value',
    send: ops({ op: 'add', path: 'nickName' }),
    scimType: ['invalidSyntax', 'invalidValue'],
  },
  {
    name: 'replace with a path and no value',
    send: ops({ op: 'replace', path: 'title' }),
    scimType: ['invalidSyntax', 'invalidValue'],
  },
  // values → invalidValue
  {
    name: 'replace active "maybe"',
    send: ops({ op: 'replace', path: 'active', value: 'maybe' }),
    scimType: 'invalidValue',
    detail: /active/,
  },
  {
    name: 'replace displayName with a number',
    send: ops({ op: 'replace', path: 'displayName', value: 42 }),
    scimType: 'invalidValue',
    detail: /displayName/,
  },
  {
    name: 'replace name with a string',
    send: ops({ op: 'replace', path: 'name', value: 'Ana' }),
    scimType: 'invalidValue',
    detail: /name/,
  },
  {
    name: 'pathless active "maybe"',
    send: ops({ op: 'replace', value: { active: 'maybe' } }),
    scimType: 'invalidValue',
    detail: /active/,
  },
  {
    name: 'pathless replace whose value is not an object',
    send: ops({ op: 'replace', value: 'x' }),
    scimType: 'invalidValue',
  },
  {
    name: 'remove userName',
    send: ops({ op: 'remove', path: 'userName' }),
    scimType: 'invalidValue',
    detail: /userName/,
  },
  {
    name: 'replace userName with ""',
    send: ops({ op: 'replace', path: 'userName', value: '' }),
    scimType: 'invalidValue',
    detail: /userName/,
  },
  {
    // The RFC names no limit; scimd's is 1000. Debatable: invalidValue or tooMany.
    name: '1001 operations',
    send: ops(...Array.from({ length: 1001 }, () => ({ op: 'replace', path: 'title', value: 'x' }))),
    scimType: ['invalidValue', 'tooMany'],
    detail: /1000/,
  },
  {
    name: 'a NUL character in a value',
    send: ops({ op: 'replace', path: 'displayName', value: 'a\u0000b' }),
    scimType: 'invalidValue',
    detail: /displayName/,
  },
  {
    name: 'an unpaired surrogate in a pathless value',
    send: (r) =>
      r
        .set('Content-Type', SCIM_JSON)
        .send('{"Operations":[{"op":"replace","value":{"nickName":"\\ud800"}}]}'),
    scimType: 'invalidValue',
    detail: /nickName/,
  },
  {
    name: 'a NUL character in a new email',
    send: ops({ op: 'add', path: 'emails', value: [{ value: 'x\u0000@corp.example' }] }),
    scimType: 'invalidValue',
  },
  // paths → invalidPath
  {
    name: 'a path naming no attribute',
    send: ops({ op: 'replace', path: 'favoriteColor', value: 'x' }),
    scimType: 'invalidPath',
    detail: /favoriteColor/,
  },
  {
    name: 'an unknown sub-attribute',
    send: ops({ op: 'replace', path: 'name.nickname', value: 'x' }),
    scimType: 'invalidPath',
  },
  {
    name: 'a path three levels deep',
    send: ops({ op: 'replace', path: 'name.givenName.first', value: 'x' }),
    scimType: 'invalidPath',
  },
  {
    name: 'an unknown enterprise attribute',
    send: ops({ op: 'replace', path: `${ENTERPRISE}:shoeSize`, value: 'x' }),
    scimType: 'invalidPath',
  },
  {
    name: 'an unknown schema URN',
    send: ops({ op: 'replace', path: 'urn:example:acme:2.0:User:badge', value: 'x' }),
    scimType: 'invalidPath',
  },
  {
    name: 'a broken filter',
    send: ops({ op: 'replace', path: 'emails[type eq "work"', value: 'x' }),
    scimType: 'invalidPath',
  },
  {
    name: 'a filter with an unterminated string',
    send: ops({ op: 'replace', path: 'emails[type eq "work].value', value: 'x' }),
    scimType: 'invalidPath',
  },
  {
    name: 'a filter on a single-valued attribute',
    send: ops({ op: 'replace', path: 'name[givenName eq "x"]', value: 'x' }),
    scimType: 'invalidPath',
  },
  {
    name: 'a filter on a simple attribute',
    send: ops({ op: 'replace', path: 'title[value eq "x"]', value: 'x' }),
    scimType: 'invalidPath',
  },
  {
    name: 'a nested filter',
    send: ops({
      op: 'replace',
      path: 'emails[type eq "work" and phoneNumbers[type eq "x"]].value',
      value: 'x',
    }),
    scimType: 'invalidPath',
  },
  {
    name: 'a filter on an unknown sub-attribute',
    send: ops({ op: 'replace', path: 'emails[colour eq "x"].value', value: 'x' }),
    scimType: 'invalidPath',
  },
  {
    name: 'an unknown sub-attribute after a filter',
    send: ops({ op: 'replace', path: 'emails[type eq "work"].colour', value: 'x' }),
    scimType: 'invalidPath',
  },
  {
    name: 'a bad path after a valid operation names Operations[1]',
    send: ops(
      { op: 'replace', path: 'displayName', value: 'X' },
      { op: 'replace', path: 'favoriteColor', value: 'y' },
      { op: 'replace', path: 'title', value: 'Z' },
    ),
    scimType: 'invalidPath',
    detail: /Operations\[1\]/,
  },
  // noTarget
  { name: 'remove without a path', send: ops({ op: 'remove' }), scimType: 'noTarget' },
  {
    name: 'Remove without a path but with a value',
    send: ops({ op: 'Remove', value: { nickName: 'ana' } }),
    scimType: 'noTarget',
  },
  {
    name: 'a filtered replace that matches nothing and cannot describe an element',
    send: ops({ op: 'replace', path: 'emails[value co "nowhere"].value', value: 'x' }),
    scimType: 'noTarget',
  },
  // mutability
  {
    name: 'replace id',
    send: ops({ op: 'replace', path: 'id', value: 'someone-else' }),
    scimType: 'mutability',
  },
  {
    name: 'a pathless replace changing id',
    send: ops({ op: 'replace', value: { id: 'someone-else', active: false } }),
    scimType: 'mutability',
  },
];

describe('PATCH /Users/{id}: bad requests are 400 with the right scimType and change nothing', () => {
  it.each(badCases)('$name', async ({ send, scimType, detail }) => {
    const created = await createUser({ userName: uniqueName('bad'), ...B });
    const before = await getUser(created.id);
    const res = await send(rawPatch(created.id), created);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.headers['content-type']).toBe(SCIM_JSON);
    expect(res.body).toMatchObject({ schemas: [SCIM_ERROR], status: '400' });
    expect(Array.isArray(scimType) ? scimType : [scimType]).toContain(res.body.scimType);
    expect(typeof res.body.detail).toBe('string');
    expect(res.body.detail.length).toBeGreaterThan(0);
    if (detail) expect(res.body.detail).toMatch(detail);
    expect(await getUser(created.id)).toEqual(before);
  });

  it('names the operation whose value breaks the schema, and applies none of the others', async () => {
    const created = await createUser({ userName: uniqueName('bad'), ...B });
    const res = await t.patch(
      `/Users/${created.id}`,
      patchBody([
        { op: 'replace', path: 'displayName', value: 'X' },
        { op: 'replace', path: 'active', value: 'maybe' },
        { op: 'replace', path: 'title', value: 'Z' },
      ]),
    );
    expect(res.status).toBe(400);
    expect(res.body.scimType).toBe('invalidValue');
    expect(await getUser(created.id)).toEqual(created);
    // README "PATCH": "if one fails, nothing changes and the 400 names it".
    expect(res.body.detail).toMatch(/Operations\[1\]/);
  });

  it('answers 404 for an unknown user, after checking the body', async () => {
    const body = patchBody([{ op: 'replace', path: 'active', value: false }]);
    for (const id of ['00000000-0000-4000-8000-000000000000', '010101001010101011001010101011']) {
      const res = await t.patch(`/Users/${id}`, body).expect(404);
      expect(res.headers['content-type']).toBe(SCIM_JSON);
      expect(res.body).toMatchObject({ schemas: [SCIM_ERROR], status: '404' });
      expect(res.body.detail).toBeTruthy();
    }
  });

  it('answers 403 to a token limited to Groups, changing nothing', async () => {
    const created = await createUser({ userName: uniqueName(), ...B });
    const groupsOnly = await harness.createToken(t.orgId, { scopes: ['groups'] });
    const res = await harness.http
      .patch(`${t.basePath}/Users/${String(created.id)}`)
      .set('Authorization', `Bearer ${groupsOnly}`)
      .set('Content-Type', SCIM_JSON)
      .send(patchBody([{ op: 'replace', path: 'active', value: false }]));
    expect(res.status).toBe(403);
    expect(res.headers['content-type']).toBe(SCIM_JSON);
    expect(res.body).toMatchObject({ schemas: [SCIM_ERROR], status: '403' });
    expect(await getUser(created.id)).toEqual(created);
  });

  it("refuses to take another user's userName, in any case: 409 uniqueness, nothing changed", async () => {
    const taken = uniqueName('taken');
    await createUser({ userName: taken });
    const created = await createUser({ userName: uniqueName(), ...B });
    for (const op of [
      { op: 'replace', path: 'userName', value: taken.toUpperCase() },
      { op: 'replace', value: { userName: taken } },
    ]) {
      const res = await t.patch(`/Users/${created.id}`, patchBody([op]));
      expect(res.status).toBe(409);
      expect(res.headers['content-type']).toBe(SCIM_JSON);
      expect(res.body).toMatchObject({ schemas: [SCIM_ERROR], status: '409', scimType: 'uniqueness' });
    }
    expect(await getUser(created.id)).toEqual(created);
    // A case change of its own userName is not a conflict.
    const own = String(created.userName).toUpperCase();
    await t
      .patch(`/Users/${created.id}`, patchBody([{ op: 'replace', path: 'userName', value: own }]))
      .expect(200);
    expect((await getUser(created.id)).userName).toBe(own);
  });

  it('never patches a user of another organization', async () => {
    const created = await createUser({ userName: uniqueName(), ...B });
    const other = await harness.tenant();
    const res = await other.patch(
      `/Users/${created.id}`,
      patchBody([{ op: 'replace', path: 'active', value: false }]),
    );
    expect(res.status).toBe(404);
    expect(await getUser(created.id)).toEqual(created);
  });

  it('answers 401 without a token', async () => {
    const created = await createUser({ userName: uniqueName(), ...B });
    await harness.http
      .patch(`${t.basePath}/Users/${String(created.id)}`)
      .set('Content-Type', SCIM_JSON)
      .send(patchBody([{ op: 'replace', path: 'active', value: false }]))
      .expect(401);
    expect(await getUser(created.id)).toEqual(created);
  });
});

// Debatable: RFC 7644 §3.5.2 says a client "MUST NOT modify an attribute that has mutability
// readOnly" and that such an operation "SHALL return" an error; scimd ignores readOnly attributes
// (rightly, inside a pathless value or a PUT body, where Okta repeats them) but also when a path
// names one explicitly, which no IdP sends.
describe('PATCH /Users/{id}: an explicit path to a readOnly attribute (debatable)', () => {
  it.each([
    ['replace groups', { op: 'replace', path: 'groups', value: [{ value: 'g-1' }] }],
    ['replace meta.created', { op: 'replace', path: 'meta.created', value: '2000-01-01T00:00:00Z' }],
    ['remove id', { op: 'remove', path: 'id' }],
  ])('%s is 400 mutability', async (_, op) => {
    const created = await createUser({ userName: uniqueName('ro'), ...B });
    const res = await t.patch(`/Users/${created.id}`, patchBody([op]));
    expect(res.status).toBe(400);
    expect(res.body.scimType).toBe('mutability');
    expect(await getUser(created.id)).toEqual(created);
  });
});

describe('ServiceProviderConfig', () => {
  it('advertises PATCH', async () => {
    const spc = (await t.get('/ServiceProviderConfig').expect(200)).body;
    expect(spc.patch).toEqual({ supported: true });
  });
});
