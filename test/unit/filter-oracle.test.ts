// scim2-parse-filter as an independent oracle for scimd's filter parser (src/filter/parse.ts): on the
// part of the grammar the library parses correctly, both must read every filter the same way. The
// library stays out of the request path for the gaps the last tests pin (the README's Filters
// section names them); if a later version closes one, its test says so.
import fc from 'fast-check';
import { type Filter as OracleFilter, parse as oracleParse } from 'scim2-parse-filter';
import { describe, expect, it } from 'vitest';
import type { Filter } from '../../src/filter/ast.js';
import { parseFilter } from '../../src/filter/parse.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 150);
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

/** Both ASTs in one shape: the library's, with same-kind and/or chains flattened. */
type Normal =
  | { op: string; attrPath: string; compValue?: unknown }
  | { op: 'and' | 'or'; filters: Normal[] }
  | { op: 'not'; filter: Normal }
  | { op: '[]'; attrPath: string; valFilter: Normal };

function flatten(op: 'and' | 'or', filters: Normal[]): Normal {
  return { op, filters: filters.flatMap((f) => (f.op === op && 'filters' in f ? f.filters : [f])) };
}

function fromScimd(f: Filter): Normal {
  switch (f.kind) {
    case 'compare':
      return { op: f.op, attrPath: f.path.text, compValue: f.value };
    case 'present':
      return { op: 'pr', attrPath: f.path.text };
    case 'and':
    case 'or':
      return flatten(f.kind, f.filters.map(fromScimd));
    case 'not':
      return { op: 'not', filter: fromScimd(f.filter) };
    case 'valuePath':
      return { op: '[]', attrPath: f.path.text, valFilter: fromScimd(f.filter) };
  }
}

function fromOracle(f: OracleFilter): Normal {
  switch (f.op) {
    case 'and':
    case 'or':
      return flatten(f.op, f.filters.map(fromOracle));
    case 'not':
      return { op: 'not', filter: fromOracle(f.filter) };
    case '[]':
      return { op: '[]', attrPath: f.attrPath, valFilter: fromOracle(f.valFilter) };
    case 'pr':
      return { op: 'pr', attrPath: f.attrPath };
    default:
      return { op: f.op, attrPath: f.attrPath, compValue: f.compValue };
  }
}

// The subset both parse correctly: strings without escapes, numbers that are not negative, lower-case
// booleans, no `null`, and value paths without a trailing sub-attribute.
const anyCase = (word: string) =>
  fc
    .array(fc.boolean(), { minLength: word.length, maxLength: word.length })
    .map((upper) => [...word].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(''));
const name = fc.constantFrom('userName', 'displayName', 'title', 'active', 'externalId', 'nickName');
const complex = fc.constantFrom('name', 'meta', 'emails', 'addresses');
const sub = fc.constantFrom('givenName', 'value', 'type', 'lastModified', 'primary');
const attrPath = fc.oneof(
  name,
  fc.tuple(complex, sub).map(([n, s]) => `${n}.${s}`),
  fc.constantFrom('department', 'employeeNumber', 'manager.value').map((n) => `${ENTERPRISE}:${n}`),
);
const value = fc.oneof(
  fc
    .string({ maxLength: 12 })
    .filter((s) => !s.includes('"') && !s.includes('\\') && [...s].every((c) => c >= ' '))
    .map((s) => JSON.stringify(s)),
  fc.nat({ max: 100_000 }).map(String),
  fc.tuple(fc.nat({ max: 999 }), fc.nat({ max: 99 })).map(([a, b]) => `${a}.${b}`),
  fc.constantFrom('true', 'false'),
);
const comparison = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .tuple(
        attrPath,
        fc.constantFrom('eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le').chain(anyCase),
        value,
      )
      .map((p) => p.join(' ')),
  },
  { weight: 1, arbitrary: fc.tuple(attrPath, anyCase('pr')).map((p) => p.join(' ')) },
);
const valuePath = fc
  .tuple(
    fc.constantFrom('emails', 'addresses'),
    fc.array(fc.tuple(sub, fc.constantFrom('eq', 'co', 'sw'), value), { minLength: 1, maxLength: 3 }),
    fc.constantFrom(' and ', ' or '),
  )
  .map(([attr, terms, join]) => `${attr}[${terms.map((t) => t.join(' ')).join(join)}]`);

/** A filter as text, `and` binding tighter than `or`, parenthesized only where that needs it. */
const { filter } = fc.letrec<{ filter: string; term: string }>((tie) => ({
  term: fc.oneof(
    { weight: 4, arbitrary: comparison },
    { weight: 1, arbitrary: valuePath },
    { weight: 1, arbitrary: tie('filter').map((f) => `(${f})`) },
    { weight: 1, arbitrary: fc.tuple(anyCase('not'), tie('filter')).map(([not, f]) => `${not} (${f})`) },
  ),
  filter: fc.oneof(
    { weight: 3, arbitrary: tie('term') },
    {
      weight: 1,
      arbitrary: fc
        .tuple(tie('term'), fc.constantFrom('and', 'or').chain(anyCase), tie('term'))
        .map((p) => p.join(' ')),
    },
  ),
}));

describe('scimd reads filters as scim2-parse-filter does, where that library is right', () => {
  it('gives the same tree for every filter of the shared grammar', () => {
    fc.assert(
      fc.property(filter, (text) => {
        expect(fromScimd(parseFilter(text)), text).toEqual(fromOracle(oracleParse(text)));
      }),
      { numRuns: RUNS * 4 },
    );
  });

  it.each([
    'userName eq "bjensen"',
    'name.familyName co "O\'Malley"',
    'userName sw "J"',
    'title pr',
    'meta.lastModified gt "2011-05-13T04:42:34Z"',
    'title pr and userType eq "Employee"',
    'title pr or userType eq "Intern"',
    'schemas eq "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"',
    'userType eq "Employee" and (emails co "example.com" or emails.value co "example.org")',
    'userType ne "Employee" and not (emails co "example.com" or emails.value co "example.org")',
    'userType eq "Employee" and emails[type eq "work" and value co "@example.com"]',
    'emails[type eq "work" and value co "@example.com"] or ims[type eq "xmpp" and value co "@foo.com"]',
  ])('agrees on RFC 7644 §3.4.2.2 example %s', (text) => {
    expect(fromScimd(parseFilter(text))).toEqual(fromOracle(oracleParse(text)));
  });
});

describe('where scim2-parse-filter 0.2.10 is wrong, and scimd is not', () => {
  const compare = (text: string) => {
    const f = parseFilter(text);
    return f.kind === 'compare' ? f.value : undefined;
  };

  it('decodes escapes other than \\" (it keeps them as written)', () => {
    const text = 'displayName eq "a\\\\b \\n \\u00e9"';
    expect(compare(text)).toBe('a\\b \n é');
    expect(fromOracle(oracleParse(text))).toMatchObject({ compValue: 'a\\\\b \\n \\u00e9' });
  });

  it('reads True and a negative number followed by more of the filter (it throws)', () => {
    expect(compare('active eq True')).toBe(true);
    expect(() => oracleParse('active eq True')).toThrow();
    expect(fromScimd(parseFilter('x eq -1 and y eq 2'))).toMatchObject({ op: 'and' });
    expect(() => oracleParse('x eq -1 and y eq 2')).toThrow();
  });

  it('refuses deep nesting with a clear error (it overflows the stack)', () => {
    const nested = (depth: number) => `${'('.repeat(depth)}title pr${')'.repeat(depth)}`;
    expect(() => parseFilter(nested(40))).toThrow(/nests deeper than 32/);
    expect(() => oracleParse(nested(5000))).toThrow(RangeError);
  });

  it('keeps emails[type eq "work"].value eq "x" on one email (it makes two unrelated comparisons)', () => {
    const text = 'emails[type eq "work"].value eq "x"';
    expect(parseFilter(text)).toMatchObject({ kind: 'valuePath', filter: { kind: 'and' } });
    expect(oracleParse(text)).toMatchObject({
      op: 'and',
      filters: [{ op: '[]' }, { op: 'eq', attrPath: 'emails.value' }],
    });
  });
});
