// Filters and sorting over HTTP on a real database (RFC 7644 §3.4.2.2, §3.4.2.3, §3.4.3): eight users
// with varied attributes, and for every filter the exact set of userNames it selects.
import { randomUUID } from 'node:crypto';
import type { Response } from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { wallClockPast } from '../helpers/clock.js';
import { type Harness, type Tenant, useHarness } from '../helpers/harness.js';
import { ENTERPRISE, LIST, SCIM_ERROR, SCIM_JSON, SEARCH, USER } from '../helpers/scim.js';

let harness: Harness;
let t: Tenant;
useHarness(async (h) => {
  harness = h;
  t = await harness.tenant();
});

// Created in this order; the first four before `middle`, the rest after it.
const SEED: Record<string, unknown>[] = [
  {
    schemas: [USER, ENTERPRISE],
    userName: 'Alice.Smith@Example.com',
    externalId: 'ABC',
    displayName: 'Alice Smith',
    title: 'Engineer',
    active: true,
    name: { givenName: 'Alice', familyName: 'Smith' },
    emails: [
      { value: 'alice@corp.example', type: 'work', primary: true },
      { value: 'alice@home.example', type: 'home' },
    ],
    phoneNumbers: [{ value: '+1-555-0100', type: 'work' }],
    [ENTERPRISE]: { department: 'Sales', employeeNumber: '1001', manager: { value: 'm-1' } },
  },
  {
    schemas: [USER, ENTERPRISE],
    userName: 'bob',
    externalId: 'abc',
    displayName: 'Bob Jones',
    title: 'Engineer',
    active: false,
    name: { givenName: 'Bob', familyName: 'Employee' },
    emails: [{ value: 'bob@example.com', type: 'work', primary: true }],
    [ENTERPRISE]: { department: 'Engineering', employeeNumber: '1002', manager: { value: 'm-2' } },
  },
  {
    // Work email elsewhere, home email @corp: the correlation test. An empty title.
    schemas: [USER, ENTERPRISE],
    userName: 'carol',
    title: '',
    active: 'True',
    name: { givenName: 'Carol', familyName: 'Employee' },
    emails: [
      { value: 'carol@elsewhere.example', type: 'work' },
      { value: 'carol@corp.example', type: 'home' },
    ],
    [ENTERPRISE]: { department: 'sales' },
  },
  {
    // The primary email is the second one and the first has no `primary` at all.
    schemas: [USER, ENTERPRISE],
    userName: 'Dave',
    externalId: 'dave-ext',
    displayName: 'dave d',
    name: { givenName: 'Dave', familyName: 'Employee' },
    emails: [
      { value: 'dave@example.org', type: 'work' },
      { value: 'home-address', type: 'home', primary: true },
    ],
    [ENTERPRISE]: { manager: 'm-1' },
  },
  { schemas: [USER], userName: '100%_real' },
  {
    schemas: [USER],
    userName: 'eve_x',
    displayName: 'Eve',
    active: false,
    phoneNumbers: [{ value: '+44 20 7946 0000', type: 'mobile' }],
  },
  {
    schemas: [USER, ENTERPRISE],
    userName: 'Frank',
    externalId: 'frank-ext',
    displayName: 'Frank F',
    title: 'Manager',
    active: 'False',
    name: { familyName: 'Franklin' },
    emails: [
      { value: 'FRANK@Corp.Example', type: 'work', primary: false },
      { value: 'frank@personal.example', type: 'home', primary: true },
    ],
    [ENTERPRISE]: { department: 'Support', employeeNumber: '1007' },
  },
  { schemas: [USER], userName: 'grace' },
];

interface Seeded {
  userName: string;
  id: string;
  created: string;
  body: Record<string, unknown>;
}

const ALL = SEED.map((u) => u.userName as string);
const seeded = new Map<string, Seeded>();
/** Between the creation of the fourth and the fifth user. */
let middle: string;
/** Before the last change (a PUT of grace). */
let late: string;

/**
 * An instant strictly after every stamp made so far and strictly before every one made after it:
 * users are stamped with the wall clock, so it waits for the clock to tick past `last`, and then past
 * the instant itself (a millisecond or two, not a guessed sleep).
 */
async function instantAfter(last: string): Promise<string> {
  await wallClockPast(last);
  const instant = new Date().toISOString();
  await wallClockPast(instant);
  return instant;
}

beforeAll(async () => {
  let last = new Date(0).toISOString();
  for (const [i, body] of SEED.entries()) {
    if (i === 4) middle = await instantAfter(last);
    const res = await t.post('/Users', body).expect(201);
    last = res.body.meta.lastModified;
    seeded.set(res.body.userName, {
      userName: res.body.userName,
      id: res.body.id,
      created: res.body.meta.created,
      body: res.body,
    });
  }
  late = await instantAfter(last);
  const grace = seeded.get('grace')!;
  await t.put(`/Users/${grace.id}`, { schemas: [USER], userName: 'grace' }).expect(200);
});

const idOf = (userName: string) => seeded.get(userName)!.id;
const sorted = (names: readonly string[]) => [...names].sort();

function expectListResponse(res: Response, context: string) {
  expect(res.status, `${context}: ${JSON.stringify(res.body)}`).toBe(200);
  expect(res.headers['content-type']).toBe(SCIM_JSON);
  expect(res.body.schemas).toEqual([LIST]);
  expect(Array.isArray(res.body.Resources)).toBe(true);
}

/** The userNames a GET /Users?filter=… returns, sorted; checks status and totalResults. */
async function namesFor(filter: string): Promise<string[]> {
  const res = await t.get(`/Users?filter=${encodeURIComponent(filter)}&count=100`);
  expectListResponse(res, filter);
  expect(res.body.totalResults).toBe(res.body.Resources.length);
  return sorted(res.body.Resources.map((r: { userName: string }) => r.userName));
}

async function searchNames(path: string, filter: string): Promise<string[]> {
  const res = await t.post(path, { schemas: [SEARCH], filter, attributes: ['userName'], count: 100 });
  expectListResponse(res, `${path} ${filter}`);
  expect(res.body.totalResults).toBe(res.body.Resources.length);
  for (const r of res.body.Resources) expect(Object.keys(r).sort()).toEqual(['id', 'schemas', 'userName']);
  return sorted(res.body.Resources.map((r: { userName: string }) => r.userName));
}

function expectInvalidFilter(res: Response, detail: RegExp, context: string) {
  expect(res.status, `${context}: ${JSON.stringify(res.body)}`).toBe(400);
  expect(res.headers['content-type']).toBe(SCIM_JSON);
  expect(res.body).toMatchObject({ schemas: [SCIM_ERROR], status: '400', scimType: 'invalidFilter' });
  expect(typeof res.body.detail).toBe('string');
  expect(res.body.detail.length).toBeGreaterThan(0);
  expect(res.body.detail).toMatch(detail);
}

const but = (...excluded: string[]) => ALL.filter((n) => !excluded.includes(n));

/** [filter, the userNames it selects]. */
const CASES: [string, string[]][] = [
  // eq: case-insensitive on userName, displayName, emails.value, name.givenName
  ['userName eq "alice.smith@example.com"', ['Alice.Smith@Example.com']],
  ['userName eq "BOB"', ['bob']],
  ['USERNAME EQ "bob"', ['bob']],
  ['displayName eq "BOB JONES"', ['bob']],
  ['emails.value eq "frank@corp.example"', ['Frank']],
  ['name.givenName eq "CAROL"', ['carol']],
  // externalId is caseExact
  ['externalId eq "ABC"', ['Alice.Smith@Example.com']],
  ['externalId eq "abc"', ['bob']],
  ['externalId eq "Abc"', []],
  ['externalId co "ext"', ['Dave', 'Frank']],
  ['externalId sw "FRANK"', []],
  // ne (an absent attribute is not "not equal": it is not compared at all)
  ['userName ne "bob"', but('bob')],
  ['externalId ne "ABC"', ['bob', 'Dave', 'Frank']],
  ['title ne "engineer"', ['carol', 'Frank']],
  // co / sw / ew
  ['userName co "A"', ['100%_real', 'Alice.Smith@Example.com', 'carol', 'Dave', 'Frank', 'grace']],
  ['displayName co "SMITH"', ['Alice.Smith@Example.com']],
  ['userName sw "F"', ['Frank']],
  ['userName sw "d"', ['Dave']],
  ['name.givenName sw "al"', ['Alice.Smith@Example.com']],
  ['userName ew ".COM"', ['Alice.Smith@Example.com']],
  ['userName ew "X"', ['eve_x']],
  ['emails.value ew ".ORG"', ['Dave']],
  // gt / ge / lt / le on strings: case-insensitive, code point order
  ['userName gt "d"', ['Dave', 'eve_x', 'Frank', 'grace']],
  ['userName ge "DAVE"', ['Dave', 'eve_x', 'Frank', 'grace']],
  ['userName gt "DAVE"', ['eve_x', 'Frank', 'grace']],
  ['userName lt "BOB"', ['100%_real', 'Alice.Smith@Example.com']],
  ['userName le "BOB"', ['100%_real', 'Alice.Smith@Example.com', 'bob']],
  [`${ENTERPRISE}:employeeNumber gt "1001"`, ['bob', 'Frank']],
  [`${ENTERPRISE}:employeeNumber le "1002"`, ['Alice.Smith@Example.com', 'bob']],
  ['title gt "f"', ['Frank']],
  // pr: false for an absent attribute and for an empty string
  ['userName pr', ALL],
  ['displayName pr', ['Alice.Smith@Example.com', 'bob', 'Dave', 'eve_x', 'Frank']],
  ['title pr', ['Alice.Smith@Example.com', 'bob', 'Frank']],
  ['not (title pr)', ['carol', 'Dave', '100%_real', 'eve_x', 'grace']],
  ['externalId pr', ['Alice.Smith@Example.com', 'bob', 'Dave', 'Frank']],
  ['name.familyName pr', ['Alice.Smith@Example.com', 'bob', 'carol', 'Dave', 'Frank']],
  ['name pr', ['Alice.Smith@Example.com', 'bob', 'carol', 'Dave', 'Frank']],
  ['emails pr', ['Alice.Smith@Example.com', 'bob', 'carol', 'Dave', 'Frank']],
  ['not (emails pr)', ['100%_real', 'eve_x', 'grace']],
  ['phoneNumbers pr', ['Alice.Smith@Example.com', 'eve_x']],
  ['phoneNumbers.value co "555"', ['Alice.Smith@Example.com']],
  ['emails.primary pr', ['Alice.Smith@Example.com', 'bob', 'Dave', 'Frank']],
  // booleans (active defaults to true)
  ['active eq true', ['Alice.Smith@Example.com', 'carol', 'Dave', '100%_real', 'grace']],
  ['active eq "true"', ['Alice.Smith@Example.com', 'carol', 'Dave', '100%_real', 'grace']],
  ['active eq True', ['Alice.Smith@Example.com', 'carol', 'Dave', '100%_real', 'grace']],
  ['active ne false', ['Alice.Smith@Example.com', 'carol', 'Dave', '100%_real', 'grace']],
  ['active eq "False"', ['bob', 'eve_x', 'Frank']],
  ['active ne true', ['bob', 'eve_x', 'Frank']],
  ['active pr', ALL],
  ['meta pr', ALL],
  ['id pr', ALL],
  ['meta.created pr', ALL],
  // dateTimes (bare or quoted)
  ['meta.created gt 2015-10-10T14:38:21.8617979-07:00', ALL],
  ['meta.created lt "2015-10-10T14:38:21.8617979-07:00"', []],
  ['meta.lastModified ge 2015-10-10T21:38:21Z', ALL],
  ['meta.resourceType eq "User"', ALL],
  ['meta.resourceType eq "Group"', []],
  // the enterprise extension
  [`${ENTERPRISE}:department eq "Sales"`, ['Alice.Smith@Example.com', 'carol']],
  [`${ENTERPRISE.toUpperCase()}:DEPARTMENT eq "sales"`, ['Alice.Smith@Example.com', 'carol']],
  [`${ENTERPRISE}:department pr`, ['Alice.Smith@Example.com', 'bob', 'carol', 'Frank']],
  [`${ENTERPRISE}:manager.value eq "m-1"`, ['Alice.Smith@Example.com', 'Dave']],
  [`${ENTERPRISE}:manager eq "m-1"`, ['Alice.Smith@Example.com', 'Dave']],
  [`${ENTERPRISE}:manager pr`, ['Alice.Smith@Example.com', 'bob', 'Dave']],
  [`not (${ENTERPRISE}:manager pr)`, ['carol', '100%_real', 'eve_x', 'Frank', 'grace']],
  // and / or / not / parentheses
  [
    'name.FamilyName eq Employee and (emails.Value co example.com or emails.Value co example.org)',
    ['bob', 'Dave'],
  ],
  ['title eq "Engineer" or active eq false', ['Alice.Smith@Example.com', 'bob', 'eve_x', 'Frank']],
  ['title eq "Engineer" and active eq false', ['bob']],
  ['not (active eq true) and displayName pr', ['bob', 'eve_x', 'Frank']],
  ['userName eq "bob" or userName eq "carol" and active eq false', ['bob']],
  ['(userName eq "bob" or userName eq "carol") and active eq true', ['carol']],
  ['not (userName eq "bob" or userName eq "carol")', but('bob', 'carol')],
  ['not (not (userName eq "bob"))', ['bob']],
  ['not (displayName eq "Eve")', but('eve_x')],
  ['userName eq "bob" and userName eq "carol"', []],
  // value paths: one and the same element
  ['emails[type eq "work" and value co "@corp"]', ['Alice.Smith@Example.com', 'Frank']],
  ['emails.type eq "work" and emails.value co "@corp"', ['Alice.Smith@Example.com', 'carol', 'Frank']],
  ['emails[type eq "home" and value co "@corp"]', ['carol']],
  ['emails[type eq "work"].value eq "bob@example.com"', ['bob']],
  ['emails[type eq "work"].value eq "home-address"', []],
  ['emails[type eq "home"].value eq "HOME-ADDRESS"', ['Dave']],
  ['emails[type eq "work"].value co "@corp"', ['Alice.Smith@Example.com', 'Frank']],
  ['emails[type eq "work"].value pr', ['Alice.Smith@Example.com', 'bob', 'carol', 'Dave', 'Frank']],
  ['emails[primary eq true].value eq "home-address"', ['Dave']],
  ['emails[primary eq true].value eq "dave@example.org"', []],
  ['emails[primary eq true].value eq "alice@corp.example"', ['Alice.Smith@Example.com']],
  ['emails[primary eq true]', ['Alice.Smith@Example.com', 'bob', 'Dave', 'Frank']],
  ['emails[not (primary eq true)].value co "corp"', ['carol', 'Frank']],
  ['emails[type eq "work" or type eq "home"].value ew "example.org"', ['Dave']],
  ['not (emails[type eq "home"])', ['bob', '100%_real', 'eve_x', 'grace']],
  // multi-valued: any element
  ['emails.value eq "home-address"', ['Dave']],
  ['emails.value eq "alice@home.example"', ['Alice.Smith@Example.com']],
  ['emails co "corp"', ['Alice.Smith@Example.com', 'carol', 'Frank']],
  ['emails eq "bob@example.com"', ['bob']],
  ['emails.type eq "home"', ['Alice.Smith@Example.com', 'carol', 'Dave', 'Frank']],
  ['emails.value pr', ['Alice.Smith@Example.com', 'bob', 'carol', 'Dave', 'Frank']],
  // LIKE wildcards are literal characters
  ['userName co "%"', ['100%_real']],
  ['userName co "%_"', ['100%_real']],
  ['userName co "_"', ['100%_real', 'eve_x']],
  ['userName sw "_"', []],
  ['userName sw "%"', []],
  ['userName ew "%"', []],
  ['userName co "\\\\"', []],
  ['userName sw "100%"', ['100%_real']],
  // no match is an empty list
  ['userName eq "nobody"', []],
  ['id eq "not-a-uuid"', []],
  [`id eq "${randomUUID()}"`, []],
  [`groups.value eq "${randomUUID()}"`, []],
  ['groups.value eq "not-a-uuid"', []],
  ['groups pr', []],
  ['not (groups pr)', ALL],
  ['groups.display co "x"', []],
];

describe('GET /Users?filter=', () => {
  it.each(CASES)('%s', async (filter, expected) => {
    expect(await namesFor(filter)).toEqual(sorted(expected));
  });

  it('compares id exactly', async () => {
    const id = idOf('carol');
    expect(await namesFor(`id eq "${id}"`)).toEqual(['carol']);
    expect(await namesFor(`id ne "${id}"`)).toEqual(sorted(but('carol')));
    expect(await namesFor(`id eq "${id}" or id eq "${idOf('bob')}"`)).toEqual(['bob', 'carol']);
  });

  it('filters on meta.created and meta.lastModified, quoted and bare', async () => {
    const before = ['Alice.Smith@Example.com', 'bob', 'carol', 'Dave'];
    const after = ['100%_real', 'eve_x', 'Frank', 'grace'];
    expect(await namesFor(`meta.created lt "${middle}"`)).toEqual(sorted(before));
    expect(await namesFor(`meta.created gt "${middle}"`)).toEqual(sorted(after));
    expect(await namesFor(`meta.created le ${middle}`)).toEqual(sorted(before));
    expect(await namesFor(`meta.created ge ${middle}`)).toEqual(sorted(after));
    expect(await namesFor(`meta.lastModified gt "${late}"`)).toEqual(['grace']);
    expect(await namesFor(`meta.lastModified lt ${late}`)).toEqual(sorted(but('grace')));
    expect(await namesFor(`meta.created gt "${late}"`)).toEqual([]);
    // The same instant, written with an offset.
    const offset = new Date(Date.parse(middle) - 2 * 3600_000).toISOString().replace('Z', '-02:00');
    expect(await namesFor(`meta.created gt ${offset}`)).toEqual(sorted(after));
  });

  it("filters on schemas: the core schema is every user's, an extension only its carriers' (RFC 7644 §3.4.2.2)", async () => {
    const carriers = (await t.get('/Users?count=100').expect(200)).body.Resources.filter(
      (u: Record<string, unknown>) => (u.schemas as string[]).includes(ENTERPRISE),
    );
    const withExtension = sorted(carriers.map((u: { userName: string }) => u.userName));
    expect(withExtension.length).toBeGreaterThan(0);
    expect(await namesFor(`schemas eq "${ENTERPRISE}"`)).toEqual(withExtension);
    expect(await namesFor(`schemas eq "${ENTERPRISE.toUpperCase()}"`)).toEqual(withExtension);
    expect(await namesFor(`not (schemas eq "${ENTERPRISE}")`)).toEqual(sorted(but(...withExtension)));
    expect(await namesFor(`schemas eq "${USER}"`)).toEqual(sorted(but()));
    expect(await namesFor('schemas pr')).toEqual(sorted(but()));
    expect(await namesFor('schemas eq "urn:example:nothing"')).toEqual([]);
    expect(await namesFor('schemas co "extension:enterprise"')).toEqual(withExtension);
  });

  it('answers no match with 200, totalResults 0 and Resources []', async () => {
    const res = await t.get(`/Users?filter=${encodeURIComponent('userName eq "nobody"')}`);
    expectListResponse(res, 'no match');
    expect(res.body).toEqual({
      schemas: [LIST],
      totalResults: 0,
      startIndex: 1,
      itemsPerPage: 0,
      Resources: [],
    });
  });

  it("accepts Entra's test-connection request: + for spaces, no Accept or Content-Type", async () => {
    const res = await harness.http
      .get(`${t.basePath}/Users?filter=userName+eq+%22${randomUUID()}%22`)
      .set('Authorization', `Bearer ${t.token}`);
    expectListResponse(res, 'test connection');
    expect(res.body).toMatchObject({ totalResults: 0, Resources: [] });
    const bob = await harness.http
      .get(`${t.basePath}/Users?filter=userName+eq+%22bob%22`)
      .set('Authorization', `Bearer ${t.token}`);
    expectListResponse(bob, 'plus signs');
    expect(bob.body.Resources.map((r: { userName: string }) => r.userName)).toEqual(['bob']);
  });
});

describe('invalid filters', () => {
  const errors: [string, string, RegExp][] = [
    ['a syntax error', 'userName eq', /value/],
    ['an unterminated string', 'userName eq "bob', /unterminated/],
    ['an unbalanced parenthesis', '(userName eq "bob"', /"\)"/],
    ['an unknown attribute', 'nope eq "x"', /nope/],
    ['an unknown attribute in a complex filter', 'userName pr and (nope pr or title pr)', /nope/],
    ['an unknown sub-attribute', 'name.nope eq "x"', /name\.nope/],
    ['an unknown extension attribute', `${ENTERPRISE}:nope eq "x"`, /nope/],
    ['an unknown schema', 'urn:example:nope:1.0:User:userName eq "x"', /userName|not an attribute/],
    ['gt on a boolean', 'active gt true', /"gt".*active/],
    ['co on a boolean', 'active co "t"', /"co".*active/],
    ['co on a dateTime', 'meta.created co "2020"', /"co".*meta\.created/],
    ['sw on a boolean sub-attribute', 'emails.primary sw "t"', /"sw".*primary/],
    ['a complex attribute without value', 'name eq "x"', /name.*complex/],
    ['an unknown sub-attribute in brackets', 'emails[nope eq "x"]', /nope/],
    ['an unknown sub-attribute after brackets', 'emails[type eq "work"].nope eq "x"', /nope/],
    ['brackets on a singular attribute', 'name[givenName eq "x"]', /multi-valued/],
    ['a non-date for a dateTime', 'meta.created gt "yesterday"', /yesterday/],
    ['a boolean for a dateTime', 'meta.created eq true', /dateTime/],
    ['a number for a dateTime', 'meta.lastModified gt 12', /dateTime/],
    ['a string for a boolean', 'active eq "yes"', /boolean/],
    ['a boolean for a string', 'userName eq true', /string/],
    ['a returned:never attribute', 'password eq "x"', /password/],
    ['password pr', 'password pr', /password/],
    ['eq null', 'userName eq null', /null/],
    ['ne null', 'title ne null', /null/],
    ['a raw NUL in a quoted value', 'userName eq "a\u0000"', /string|NUL|position/],
    ['an escaped NUL in a value', String.raw`userName eq "a\u0000"`, /NUL/],
    ['an escaped NUL in an element value', String.raw`emails[value eq "\u0000"]`, /NUL/],
    ['an unpaired surrogate', String.raw`displayName co "\ud800"`, /surrogate/],
    ['a filter longer than 8192 characters', `userName eq "${'a'.repeat(8986)}"`, /longer than 8192/],
    ['40 nested parentheses', `${'('.repeat(40)}userName pr${')'.repeat(40)}`, /deeper than 32/],
  ];

  it.each(errors)('GET: %s → 400 invalidFilter', async (_name, filter, detail) => {
    const res = await t.get(`/Users?filter=${encodeURIComponent(filter)}`);
    expectInvalidFilter(res, detail, filter);
  });

  it.each(errors)('POST /Users/.search: %s → 400 invalidFilter', async (_name, filter, detail) => {
    const res = await t.post('/Users/.search', { schemas: [SEARCH], filter });
    expectInvalidFilter(res, detail, filter);
  });

  it('checks the filter length on a 9000-character filter', () => {
    expect(errors.find(([name]) => name.startsWith('a filter longer'))![1]).toHaveLength(9000);
  });
});

describe('POST /Users/.search and POST /.search', () => {
  it.each(CASES)('%s', async (filter, expected) => {
    expect(await searchNames('/Users/.search', filter)).toEqual(sorted(expected));
    expect(await searchNames('/.search', filter)).toEqual(sorted(expected));
  });

  it('sorts and pages as GET does', async () => {
    const body = { schemas: [SEARCH], sortBy: 'userName', sortOrder: 'descending', startIndex: 2, count: 3 };
    const get = await t.get('/Users?sortBy=userName&sortOrder=descending&startIndex=2&count=3').expect(200);
    for (const path of ['/Users/.search', '/.search']) {
      const res = await t.post(path, body);
      expectListResponse(res, path);
      expect(res.body.Resources.map((r: { userName: string }) => r.userName)).toEqual(
        get.body.Resources.map((r: { userName: string }) => r.userName),
      );
      expect(res.body).toMatchObject({ totalResults: 8, startIndex: 2, itemsPerPage: 3 });
    }
  });

  it.each([
    ['a number', 42],
    ['an object', { op: 'eq' }],
  ])('refuses a filter that is %s: 400', async (_name, filter) => {
    for (const path of ['/Users/.search', '/.search']) {
      const res = await t.post(path, { schemas: [SEARCH], filter });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.headers['content-type']).toBe(SCIM_JSON);
      expect(res.body).toMatchObject({ schemas: [SCIM_ERROR], status: '400' });
      expect(['invalidSyntax', 'invalidFilter', 'invalidValue']).toContain(res.body.scimType);
      expect(res.body.detail).toMatch(/filter/);
    }
  });
});

describe('sorting', () => {
  /** The order the server must produce: key (null last ascending, first descending), then id. */
  function expectedOrder(key: (u: Seeded) => string | null, descending: boolean): string[] {
    const dir = descending ? -1 : 1;
    const byText = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
    return [...seeded.values()]
      .sort((u, v) => {
        const ku = key(u);
        const kv = key(v);
        if (ku === kv) return dir * byText(u.id, v.id);
        if (ku === null) return descending ? -1 : 1;
        if (kv === null) return descending ? 1 : -1;
        return dir * byText(ku, kv);
      })
      .map((u) => u.userName);
  }

  async function order(query: string): Promise<string[]> {
    const res = await t.get(`/Users?${query}&count=100`);
    expectListResponse(res, query);
    expect(res.body.totalResults).toBe(8);
    return res.body.Resources.map((r: { userName: string }) => r.userName);
  }

  const lower = (s: unknown) => (typeof s === 'string' ? s.toLowerCase() : null);
  const name = (u: Seeded) => u.body.name as Record<string, unknown> | undefined;
  const primaryEmail = (u: Seeded) => {
    const emails = u.body.emails as { value: string; primary?: boolean }[] | undefined;
    if (!emails) return null;
    return (emails.find((e) => e.primary === true) ?? emails[0])!.value.toLowerCase();
  };

  it('sortBy=userName ascending and descending, case-insensitive', async () => {
    const ascending = [
      '100%_real',
      'Alice.Smith@Example.com',
      'bob',
      'carol',
      'Dave',
      'eve_x',
      'Frank',
      'grace',
    ];
    expect(await order('sortBy=userName')).toEqual(ascending);
    expect(await order('sortBy=userName&sortOrder=ascending')).toEqual(ascending);
    expect(await order('sortBy=USERNAME&sortOrder=Ascending')).toEqual(ascending);
    expect(await order('sortBy=userName&sortOrder=descending')).toEqual([...ascending].reverse());
  });

  it.each<[string, (u: Seeded) => string | null]>([
    ['name.familyName', (u) => lower(name(u)?.familyName)],
    ['name.givenName', (u) => lower(name(u)?.givenName)],
    ['displayName', (u) => lower(u.body.displayName)],
    ['title', (u) => lower(u.body.title)],
    ['externalId', (u) => (u.body.externalId as string | undefined) ?? null],
    ['emails.value', primaryEmail],
    ['emails', primaryEmail],
    [
      `${ENTERPRISE}:department`,
      (u) => lower((u.body[ENTERPRISE] as Record<string, unknown> | undefined)?.department),
    ],
    ['meta.created', (u) => u.created],
    [
      `${ENTERPRISE}:manager`,
      (u) =>
        lower(
          (
            (u.body[ENTERPRISE] as Record<string, unknown> | undefined)?.manager as
              | { value?: string }
              | undefined
          )?.value,
        ),
    ],
  ])('sortBy=%s, both directions, missing values last ascending and first descending', async (by, key) => {
    expect(await order(`sortBy=${encodeURIComponent(by)}`)).toEqual(expectedOrder(key, false));
    expect(await order(`sortBy=${encodeURIComponent(by)}&sortOrder=descending`)).toEqual(
      expectedOrder(key, true),
    );
  });

  it('sortBy=meta.created descending returns the newest first', async () => {
    const res = await t.get('/Users?sortBy=meta.created&sortOrder=descending').expect(200);
    const created: string[] = res.body.Resources.map((r: { meta: { created: string } }) => r.meta.created);
    expect(created).toEqual([...created].sort().reverse());
    expect(res.body.Resources[0].userName).toBe('grace');
    expect(res.body.Resources.at(-1).userName).toBe('Alice.Smith@Example.com');
  });

  it('puts a missing title last ascending and first descending; ties give the same order every time', async () => {
    const ascending = await order('sortBy=title');
    expect(ascending.slice(0, 4).sort()).toEqual(
      sorted(['carol', 'Alice.Smith@Example.com', 'bob', 'Frank']),
    );
    expect(ascending[0]).toBe('carol'); // "" sorts first: it is a value, not a missing one
    expect(ascending[3]).toBe('Frank');
    expect(ascending.slice(4).sort()).toEqual(sorted(['Dave', '100%_real', 'eve_x', 'grace']));
    for (let i = 0; i < 3; i++) expect(await order('sortBy=title')).toEqual(ascending);
    const descending = await order('sortBy=title&sortOrder=descending');
    expect(descending.slice(0, 4).sort()).toEqual(sorted(['Dave', '100%_real', 'eve_x', 'grace']));
    for (let i = 0; i < 3; i++) expect(await order('sortBy=title&sortOrder=descending')).toEqual(descending);
  });

  it('sorts before paging: startIndex=2&count=2&sortBy=userName gives the 2nd and 3rd names', async () => {
    const res = await t.get('/Users?startIndex=2&count=2&sortBy=userName');
    expectListResponse(res, 'paging');
    expect(res.body).toMatchObject({ totalResults: 8, startIndex: 2, itemsPerPage: 2 });
    expect(res.body.Resources.map((r: { userName: string }) => r.userName)).toEqual([
      'Alice.Smith@Example.com',
      'bob',
    ]);
    const descending = await t.get('/Users?startIndex=2&count=2&sortBy=userName&sortOrder=descending');
    expect(descending.body.Resources.map((r: { userName: string }) => r.userName)).toEqual([
      'Frank',
      'eve_x',
    ]);
  });

  it('filters, sorts and pages together', async () => {
    const res = await t.get(
      `/Users?filter=${encodeURIComponent('active eq true')}&sortBy=userName&sortOrder=descending&startIndex=2&count=2`,
    );
    expectListResponse(res, 'filter+sort+page');
    expect(res.body).toMatchObject({ totalResults: 5, startIndex: 2, itemsPerPage: 2 });
    expect(res.body.Resources.map((r: { userName: string }) => r.userName)).toEqual(['Dave', 'carol']);
  });

  it.each([
    ['sortBy=nope', /nope/],
    ['sortBy=name.nope', /name\.nope/],
    ['sortBy=password', /password/],
    ['sortBy=name', /name/],
    ['sortBy=groups.value', /groups/],
    ['sortBy=meta.location', /meta\.location/],
    ['sortOrder=sideways', /sideways/],
    ['sortBy=userName&sortOrder=sideways', /sideways/],
  ])('%s → 400 invalidValue', async (query, detail) => {
    const res = await t.get(`/Users?${query}`);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.headers['content-type']).toBe(SCIM_JSON);
    // A bad sort parameter is not a bad filter.
    expect(res.body).toMatchObject({ schemas: [SCIM_ERROR], status: '400', scimType: 'invalidValue' });
    expect(res.body.detail).toMatch(detail);
  });
});

describe('bare numbers in string position', () => {
  // resolve.ts: "A bare number in string position (`employeeNumber eq 7781`) is the string it spells."
  let other: Tenant;
  beforeAll(async () => {
    other = await harness.tenant();
    for (const [userName, externalId, employeeNumber] of [
      ['n1', '7781', '7781'],
      ['n2', '1.50', '12345678901234567890'],
    ] as const) {
      await other
        .post('/Users', {
          schemas: [USER, ENTERPRISE],
          userName,
          externalId,
          [ENTERPRISE]: { employeeNumber },
        })
        .expect(201);
    }
  });

  it.each([
    [`${ENTERPRISE}:employeeNumber eq 7781`, ['n1']],
    ['externalId eq 7781', ['n1']],
    ['externalId eq 1.50', ['n2']],
    [`${ENTERPRISE}:employeeNumber eq 12345678901234567890`, ['n2']],
  ])('%s', async (filter, expected) => {
    const res = await other.get(`/Users?filter=${encodeURIComponent(filter)}`);
    expectListResponse(res, filter);
    expect(sorted(res.body.Resources.map((r: { userName: string }) => r.userName))).toEqual(expected);
  });
});
