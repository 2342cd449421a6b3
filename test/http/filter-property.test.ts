// The SQL compiler and the in-memory evaluator agree: for random users and random filters, the ids
// the database returns are exactly the ids the evaluator picks from the rendered users.
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { matchesFilter } from '../../src/filter/evaluate.js';
import { parseFilter } from '../../src/filter/parse.js';
import { resolveFilter } from '../../src/filter/resolve.js';
import { resourceTypes } from '../../src/schema/registry.js';
import { type Tenant, useHarness } from '../helpers/harness.js';
import { ENTERPRISE } from '../helpers/scim.js';

// Small domains, in mixed case and with LIKE wildcards, so that random filters often match.
const WORDS = [
  'ana',
  'ANA',
  'Bo',
  'bob',
  'b%',
  'x_y',
  'Zed',
  'zed',
  '',
  'a@corp.example',
  'A@Corp.Example',
  '10',
];
const word = fc.constantFrom(...WORDS);
const TYPES = ['work', 'home', 'other', 'Work'];

const userArb = fc.record(
  {
    displayName: word,
    title: word,
    active: fc.boolean(),
    nickName: word,
    name: fc.record({ givenName: word, familyName: word }, { requiredKeys: [] }),
    emails: fc.array(
      fc.record(
        { value: word, type: fc.constantFrom(...TYPES), primary: fc.boolean(), display: word },
        { requiredKeys: ['value'] },
      ),
      { maxLength: 3 },
    ),
    externalId: word,
    [ENTERPRISE]: fc.record({ department: word, employeeNumber: word }, { requiredKeys: [] }),
  },
  { requiredKeys: [] },
);

const stringPaths = [
  'userName',
  'displayName',
  'title',
  'nickName',
  'name.givenName',
  'name.familyName',
  'externalId',
  'emails.value',
  'emails.type',
  'emails.display',
  'emails',
  `${ENTERPRISE}:department`,
  `${ENTERPRISE}:employeeNumber`,
];
const stringOps = ['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le'];
const quoted = word.map((w) => JSON.stringify(w));

const attrExpr: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(fc.constantFrom(...stringPaths), fc.constantFrom(...stringOps), quoted).map((p) => p.join(' ')),
  fc.tuple(fc.constantFrom(...stringPaths, 'active', 'emails.primary', 'name')).map(([p]) => `${p} pr`),
  fc
    .tuple(fc.constantFrom('active', 'emails.primary'), fc.constantFrom('eq', 'ne'), fc.boolean())
    .map((p) => p.join(' ')),
  fc
    .tuple(
      fc.constantFrom('meta.created', 'meta.lastModified'),
      fc.constantFrom('gt', 'lt', 'ge'),
      fc.date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true }),
    )
    .map(([p, op, d]) => `${p} ${op} "${d.toISOString()}"`),
);
const elementExpr: fc.Arbitrary<string> = fc.oneof(
  fc
    .tuple(fc.constantFrom('value', 'type', 'display'), fc.constantFrom(...stringOps), quoted)
    .map((p) => p.join(' ')),
  fc.tuple(fc.constantFrom('primary'), fc.constantFrom('eq', 'ne'), fc.boolean()).map((p) => p.join(' ')),
  fc.constantFrom('value pr', 'primary pr', 'display pr'),
);
const elementFilter = fc.oneof(
  elementExpr,
  fc.tuple(elementExpr, fc.constantFrom('and', 'or'), elementExpr).map((p) => p.join(' ')),
  elementExpr.map((e) => `not (${e})`),
);

const { filter: filterArb } = fc.letrec((tie) => ({
  filter: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    attrExpr,
    elementFilter.map((f) => `emails[${f}]`),
    fc
      .tuple(elementExpr, fc.constantFrom('value', 'display'), fc.constantFrom(...stringOps), quoted)
      .map(([inner, sub, op, v]) => `emails[${inner}].${sub} ${op} ${v}`),
    fc
      .tuple(tie('filter'), fc.constantFrom('and', 'or'), tie('filter'))
      .map(([a, op, b]) => `(${a}) ${op} (${b})`),
    tie('filter').map((f) => `not (${f})`),
  ) as fc.Arbitrary<string>,
}));

let t: Tenant;
let users: Record<string, unknown>[];

useHarness(async (h) => {
  t = await h.tenant();
  const population = fc.sample(userArb, { numRuns: 40, seed: 20261121 });
  let n = 0;
  for (const attrs of population) {
    await t.post('/Users', { userName: `${WORDS[n % WORDS.length] || 'u'}-${n}`, ...attrs }).expect(201);
    n++;
  }
  users = (await t.get('/Users?count=1000').expect(200)).body.Resources;
});

it('SQL and the evaluator select the same users for random filters', async () => {
  await fc.assert(
    fc.asyncProperty(filterArb, async (filter) => {
      const resolved = resolveFilter(parseFilter(filter), resourceTypes.User);
      const expected = users
        .filter((u) => matchesFilter(resolved, u))
        .map((u) => u.id as string)
        .sort();
      const res = await t.get(`/Users?count=1000&attributes=id&filter=${encodeURIComponent(filter)}`);
      expect(res.status, `${filter}: ${res.body.detail}`).toBe(200);
      const actual = (res.body.Resources as { id: string }[]).map((u) => u.id).sort();
      expect(actual, filter).toEqual(expected);
      expect(res.body.totalResults).toBe(expected.length);
    }),
    { numRuns: 300 },
  );
});
