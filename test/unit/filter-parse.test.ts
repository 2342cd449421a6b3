// The filter and PATCH-path parser (RFC 7644 §3.4.2.2, §3.5.2) on its own: the exact AST it builds,
// the IdP shapes it accepts, and the faults it reports — always as invalidFilter / invalidPath.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CompareOp, Filter, FilterValue, PathText } from '../../src/filter/ast.js';
import { MAX_FILTER_DEPTH, MAX_FILTER_LENGTH, parseFilter, parsePatchPath } from '../../src/filter/parse.js';
import { InvalidFilterError, InvalidPathError } from '../../src/http/scim-errors.js';
import { ENTERPRISE, USER } from '../helpers/scim.js';

/** The path `[uri:]name[.sub]`, written exactly that way. */
function at(name: string, sub?: string, uri?: string): PathText {
  return {
    ...(uri ? { uri } : {}),
    name,
    ...(sub ? { sub } : {}),
    text: `${uri ? `${uri}:` : ''}${name}${sub ? `.${sub}` : ''}`,
  };
}
/** `bare`: how a number was written (the parser keeps it for string attributes). */
const cmp = (path: PathText, op: CompareOp, value: FilterValue, bare?: string): Filter => ({
  kind: 'compare',
  path,
  op,
  value,
  ...(bare !== undefined ? { bare } : {}),
});
const pr = (path: PathText): Filter => ({ kind: 'present', path });
const and = (...filters: Filter[]): Filter => ({ kind: 'and', filters });
const or = (...filters: Filter[]): Filter => ({ kind: 'or', filters });
const not = (filter: Filter): Filter => ({ kind: 'not', filter });
const vp = (path: PathText, filter: Filter): Filter => ({ kind: 'valuePath', path, filter });

const a = at('a');
const b = at('b');
const c = at('c');

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error, but none was thrown');
}

function expectInvalidFilter(text: string, message: RegExp): void {
  const error = thrown(() => parseFilter(text));
  expect(error).toBeInstanceOf(InvalidFilterError);
  expect(error).toMatchObject({ status: 400, scimType: 'invalidFilter' });
  expect((error as Error).message).toMatch(message);
}

function nested(depth: number, inner = 'userName pr'): string {
  return `${'('.repeat(depth)}${inner}${')'.repeat(depth)}`;
}

describe('parseFilter: operators', () => {
  const compareOps: CompareOp[] = ['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le'];
  const spellings = (op: string) => [
    op,
    op.toUpperCase(),
    op[0]!.toUpperCase() + op[1]!,
    op[0]! + op[1]!.toUpperCase(),
  ];

  it.each(compareOps.flatMap((op) => spellings(op).map((written) => [written, op] as const)))(
    'userName %s "x" is the comparison %s',
    (written, op) => {
      expect(parseFilter(`userName ${written} "x"`)).toStrictEqual(cmp(at('userName'), op, 'x'));
    },
  );

  it.each(spellings('pr'))('title %s is a presence test', (written) => {
    expect(parseFilter(`title ${written}`)).toStrictEqual(pr(at('title')));
  });
});

describe('parseFilter: logical operators and grouping', () => {
  it.each<[string, Filter]>([
    ['a pr and b pr', and(pr(a), pr(b))],
    ['a pr and b pr and c pr', and(pr(a), pr(b), pr(c))],
    ['a pr or b pr or c pr', or(pr(a), pr(b), pr(c))],
    // not > and > or
    ['a pr or b pr and c pr', or(pr(a), and(pr(b), pr(c)))],
    ['a pr and b pr or c pr', or(and(pr(a), pr(b)), pr(c))],
    ['a pr and b pr or c pr and a pr', or(and(pr(a), pr(b)), and(pr(c), pr(a)))],
    ['not (a pr) and b pr', and(not(pr(a)), pr(b))],
    ['not (a pr) or not (b pr)', or(not(pr(a)), not(pr(b)))],
    ['not (a pr or b pr)', not(or(pr(a), pr(b)))],
    ['not (not (a pr))', not(not(pr(a)))],
    // case-insensitive keywords
    ['a pr AND b pr Or c pr', or(and(pr(a), pr(b)), pr(c))],
    ['NOT (a pr)', not(pr(a))],
    ['Not (a pr)', not(pr(a))],
    // parentheses group; redundant ones vanish
    ['(a pr)', pr(a)],
    ['((a pr))', pr(a)],
    ['(((a eq 1)))', cmp(a, 'eq', 1, '1')],
    ['(a pr or b pr) and c pr', and(or(pr(a), pr(b)), pr(c))],
    ['a pr and (b pr or c pr)', and(pr(a), or(pr(b), pr(c)))],
    // a parenthesised group stays a group even when it has the same operator
    ['a pr and (b pr and c pr)', and(pr(a), and(pr(b), pr(c)))],
    ['(a pr) and (b pr)', and(pr(a), pr(b))],
    ['((a pr) or (b pr))', or(pr(a), pr(b))],
    // whitespace of any kind and amount between tokens
    ['  a pr \t and\n b pr\r\n', and(pr(a), pr(b))],
  ])('%s', (text, expected) => {
    expect(parseFilter(text)).toStrictEqual(expected);
  });
});

describe('parseFilter: values', () => {
  it.each<[string, FilterValue]>([
    // every JSON escape (RFC 7159 §7) is decoded
    [String.raw`"a\"b"`, 'a"b'],
    [String.raw`"a\\b"`, 'a\\b'],
    [String.raw`"a\/b"`, 'a/b'],
    [String.raw`"a\tb"`, 'a\tb'],
    [String.raw`"a\nb"`, 'a\nb'],
    [String.raw`"\r\b\f"`, '\r\b\f'],
    [String.raw`"caf\u00e9"`, 'café'],
    [String.raw`"caf\u00E9"`, 'café'],
    [String.raw`"\ud83d\ude00"`, '😀'],
    [String.raw`"x\\"`, 'x\\'],
    [String.raw`"\\\""`, '\\"'],
    ['""', ''],
    ['"with spaces and (parens) [brackets] and or not"', 'with spaces and (parens) [brackets] and or not'],
    ['"café 😀"', 'café 😀'],
    // literals, in any case (RFC 5234 strings are case-insensitive)
    ['true', true],
    ['True', true],
    ['TRUE', true],
    ['false', false],
    ['False', false],
    ['FALSE', false],
    ['null', null],
    ['NULL', null],
    ['Null', null],
    // numbers
    ['42', 42],
    ['0', 0],
    ['3.14', 3.14],
    ['-3', -3],
    ['-0.5', -0.5],
    ['1e3', 1000],
    ['1E3', 1000],
    ['1.5e-2', 0.015],
    ['2E+2', 200],
    // bare words are strings (Microsoft's material sends them)
    ['jyoung', 'jyoung'],
    ['O', 'O'],
    ['2015-10-10T14:38:21.8617979-07:00', '2015-10-10T14:38:21.8617979-07:00'],
    ['example.com', 'example.com'],
    // not a JSON number: a leading zero
    ['007', '007'],
    ['"42"', '42'],
    ['"true"', 'true'],
    ['"null"', 'null'],
  ])('title eq %s', (written, value) => {
    expect(parseFilter(`title eq ${written}`)).toStrictEqual(
      cmp(at('title'), 'eq', value, typeof value === 'number' ? written : undefined),
    );
  });

  it.each<[string, Filter]>([
    ['x eq -3 and y pr', and(cmp(at('x'), 'eq', -3, '-3'), pr(at('y')))],
    ['(x eq -3)', cmp(at('x'), 'eq', -3, '-3')],
    ['(x eq -3) or (y gt -1.5e2)', or(cmp(at('x'), 'eq', -3, '-3'), cmp(at('y'), 'gt', -150, '-1.5e2'))],
    ['x eq True and y eq FALSE', and(cmp(at('x'), 'eq', true), cmp(at('y'), 'eq', false))],
    ['(x eq true)', cmp(at('x'), 'eq', true)],
    ['x eq "a" and y eq null', and(cmp(at('x'), 'eq', 'a'), cmp(at('y'), 'eq', null))],
    ['externalId eq jyoung', cmp(at('externalId'), 'eq', 'jyoung')],
    ['userName sw O', cmp(at('userName'), 'sw', 'O')],
    [
      'meta.created gt 2015-10-10T14:38:21.8617979-07:00',
      cmp(at('meta', 'created'), 'gt', '2015-10-10T14:38:21.8617979-07:00'),
    ],
    [
      'name.FamilyName eq Employee and (emails.Value co example.com or emails.Value co example.org)',
      and(
        cmp(at('name', 'FamilyName'), 'eq', 'Employee'),
        or(cmp(at('emails', 'Value'), 'co', 'example.com'), cmp(at('emails', 'Value'), 'co', 'example.org')),
      ),
    ],
  ])('%s', (text, expected) => {
    expect(parseFilter(text)).toStrictEqual(expected);
  });
});

describe('parseFilter: attribute paths', () => {
  it.each<[string, Filter]>([
    ['userName pr', pr(at('userName'))],
    ['USERNAME pr', pr(at('USERNAME'))],
    ['name.givenName pr', pr(at('name', 'givenName'))],
    ['NAME.GivenName pr', pr(at('NAME', 'GivenName'))],
    ['meta.lastModified pr', pr(at('meta', 'lastModified'))],
    ['x-y_z$1 pr', pr(at('x-y_z$1'))],
    [`${ENTERPRISE}:manager.value eq "m"`, cmp(at('manager', 'value', ENTERPRISE), 'eq', 'm')],
    [`${ENTERPRISE}:department eq "Sales"`, cmp(at('department', undefined, ENTERPRISE), 'eq', 'Sales')],
    [`${USER}:userName eq "bjensen"`, cmp(at('userName', undefined, USER), 'eq', 'bjensen')],
    [`${ENTERPRISE}:manager pr`, pr(at('manager', undefined, ENTERPRISE))],
    ['members[$ref eq "x"]', vp(at('members'), cmp(at('$ref'), 'eq', 'x'))],
    ['$ref pr', pr(at('$ref'))],
  ])('%s', (text, expected) => {
    expect(parseFilter(text)).toStrictEqual(expected);
  });

  it('splits a URN path at its last colon', () => {
    expect(parseFilter(`${ENTERPRISE}:manager.value eq "m-1"`)).toStrictEqual({
      kind: 'compare',
      path: {
        uri: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
        name: 'manager',
        sub: 'value',
        text: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value',
      },
      op: 'eq',
      value: 'm-1',
    });
  });
});

describe('parseFilter: value paths', () => {
  const emails = at('emails');
  const type = at('type');
  const value = at('value');
  it.each<[string, Filter]>([
    ['emails[type eq "work"]', vp(emails, cmp(type, 'eq', 'work'))],
    [
      'emails[type eq "work" and value co "@x.com"]',
      vp(emails, and(cmp(type, 'eq', 'work'), cmp(value, 'co', '@x.com'))),
    ],
    [
      'emails[type eq "work" or type eq "home"]',
      vp(emails, or(cmp(type, 'eq', 'work'), cmp(type, 'eq', 'home'))),
    ],
    ['emails[not (type eq "work")]', vp(emails, not(cmp(type, 'eq', 'work')))],
    ['emails[(type eq "work")]', vp(emails, cmp(type, 'eq', 'work'))],
    ['emails[primary eq true]', vp(emails, cmp(at('primary'), 'eq', true))],
    // Entra: the comparison after `]` is on the same element as the bracket filter
    [
      'emails[type eq "work"].value eq "a@x"',
      vp(emails, and(cmp(type, 'eq', 'work'), cmp(value, 'eq', 'a@x'))),
    ],
    ['emails[type eq "work"].value pr', vp(emails, and(cmp(type, 'eq', 'work'), pr(value)))],
    [
      'emails[type eq "work" or primary eq true].value co "x"',
      vp(emails, and(or(cmp(type, 'eq', 'work'), cmp(at('primary'), 'eq', true)), cmp(value, 'co', 'x'))),
    ],
    ['emails[type eq "work"] and userName pr', and(vp(emails, cmp(type, 'eq', 'work')), pr(at('userName')))],
    [
      'userName pr or emails[type eq "work"].value eq "a@x" and active eq true',
      or(
        pr(at('userName')),
        and(vp(emails, and(cmp(type, 'eq', 'work'), cmp(value, 'eq', 'a@x'))), cmp(at('active'), 'eq', true)),
      ),
    ],
    ['not (emails[type eq "work"])', not(vp(emails, cmp(type, 'eq', 'work')))],
    [`${ENTERPRISE}:things[value eq "x"]`, vp(at('things', undefined, ENTERPRISE), cmp(value, 'eq', 'x'))],
  ])('%s', (text, expected) => {
    expect(parseFilter(text)).toStrictEqual(expected);
  });

  it('keeps the Entra shape correlated: one valuePath, not a top-level and', () => {
    const parsed = parseFilter('emails[type eq "work"].value eq "a@x"');
    expect(parsed.kind).toBe('valuePath');
  });
});

describe('parseFilter: faults are invalidFilter and say where or what', () => {
  it.each<[string, string, RegExp]>([
    ['the empty string', '', /empty/],
    ['whitespace only', ' \t\n ', /empty/],
    ['single quotes', "userName eq 'bjensen'", /position 13|quote/i],
    ['single quotes around a phrase', "userName eq 'b jensen'", /position/],
    ['a missing value', 'userName eq', /expected a value, found the end$/],
    ['a missing value before and', 'userName eq and title pr', /expected a value|position/],
    ['a missing operator', 'userName', /expected an operator.*end$/],
    ['an unknown operator', 'userName xx "a"', /operator.*"xx" at position 10/],
    ['a value where the operator belongs', 'userName "a"', /operator.*position 10/],
    ['pr with a value', 'userName pr "a"', /"a" at position 13/],
    ['a dangling and', 'userName pr and', /expected an attribute name, found the end$/],
    ['a dangling or', 'userName pr or', /expected an attribute name, found the end$/],
    ['a leading and', 'and userName pr', /position/],
    ['two filters without and/or', 'userName pr title pr', /"title" at position 13/],
    ['an unclosed (', '(userName pr', /expected "\)", found the end$/],
    ['an unclosed [', 'emails[type eq "work"', /expected "\]", found the end$/],
    ['an extra )', 'userName pr)', /"\)" at position 12/],
    ['an extra ]', 'emails[type eq "work"]]', /"\]" at position 23/],
    ['a ) before any (', ')userName pr(', /"\)" at position 1/],
    ['an empty ( )', '()', /"\)" at position 2/],
    ['an empty [ ]', 'emails[]', /"\]" at position 8/],
    ['an unterminated quote', 'userName eq "abc', /unterminated string starting at position 13/],
    ['an unterminated quote after an escape', String.raw`userName eq "abc\"`, /unterminated string/],
    ['an invalid escape', String.raw`userName eq "\q"`, /invalid string literal at position 13/],
    ['a short \\u escape', String.raw`userName eq "\u00"`, /invalid string literal/],
    ['a raw control character in a string', 'userName eq "a\u0001b"', /invalid string literal/],
    ['nested brackets', 'emails[type[x eq 1]]', /cannot nest.*position 12/],
    ['nested brackets after and', 'emails[type eq "work" and x[y pr]]', /cannot nest/],
    ['not without parentheses', 'not userName pr', /expected "\(", found "userName" at position 5/],
    ['an attribute starting with a digit', '1userName pr', /attribute name, found "1userName" at position 1/],
    ['an attribute that is a number', '42 eq 1', /attribute name/],
    ['a path too deep', 'name.givenName.x eq "a"', /attribute name, found "name.givenName.x"/],
    ['an empty sub-attribute', 'name. eq "a"', /attribute name/],
    ['a value that is (', 'userName eq (', /expected a value, found "\(" at position 13/],
    ['a value that is [', 'userName eq [', /expected a value, found "\[" at position 13/],
    ['a value that is )', '(userName eq )', /expected a value, found "\)"/],
    ['a sub-attribute before [', 'name.givenName[x eq 1]', /operator.*"\[" at position 15/],
    ['a bad sub-attribute after ]', 'emails[type eq "work"].1x eq "a"', /sub-attribute name/],
    ['a sub-path after ] that is too deep', 'emails[type eq "work"].value.x eq "a"', /sub-attribute name/],
    ['a word after ]', 'emails[type eq "work"] eq "a"', /"eq" at position 24/],
    ['a bare string', '"userName"', /attribute name/],
  ])('%s: %s', (_name, text, message) => {
    expectInvalidFilter(text, message);
  });

  it(`nesting: ${MAX_FILTER_DEPTH - 1} and ${MAX_FILTER_DEPTH} parentheses parse, ${MAX_FILTER_DEPTH + 1} do not`, () => {
    expect(MAX_FILTER_DEPTH).toBe(32);
    expect(parseFilter(nested(31))).toStrictEqual(pr(at('userName')));
    expect(parseFilter(nested(32))).toStrictEqual(pr(at('userName')));
    expectInvalidFilter(nested(33), /nests deeper than 32 levels/);
  });

  it('nesting: not ( … ) counts as a level', () => {
    const nots = (n: number) => `${'not ('.repeat(n)}userName pr${')'.repeat(n)}`;
    expect(() => parseFilter(nots(32))).not.toThrow();
    expectInvalidFilter(nots(33), /nests deeper than 32 levels/);
  });

  it('nesting: thousands of parentheses are an invalidFilter, not a RangeError', () => {
    // 4000 levels still fit within MAX_FILTER_LENGTH: the depth limit answers, not the length limit.
    expect(nested(4000).length).toBeLessThan(MAX_FILTER_LENGTH);
    expectInvalidFilter(nested(4000), /nests deeper than 32 levels/);
    expectInvalidFilter(nested(5000), /longer than|deeper than/);
    expectInvalidFilter('('.repeat(5000), /longer than|deeper than/);
    const nots = `${'not ('.repeat(1200)}a pr${')'.repeat(1200)}`;
    expect(nots.length).toBeLessThan(MAX_FILTER_LENGTH);
    expectInvalidFilter(nots, /deeper than/);
    const brackets = `${'emails['.repeat(1000)}a pr${']'.repeat(1000)}`;
    expect(brackets.length).toBeLessThan(MAX_FILTER_LENGTH);
    expectInvalidFilter(brackets, /cannot nest/);
  });

  it(`length: ${MAX_FILTER_LENGTH} characters parse, ${MAX_FILTER_LENGTH + 1} do not`, () => {
    expect(MAX_FILTER_LENGTH).toBe(8192);
    const filterOf = (length: number) => `userName eq "${'a'.repeat(length - 14)}"`;
    expect(filterOf(MAX_FILTER_LENGTH)).toHaveLength(MAX_FILTER_LENGTH);
    expect(parseFilter(filterOf(MAX_FILTER_LENGTH))).toStrictEqual(
      cmp(at('userName'), 'eq', 'a'.repeat(MAX_FILTER_LENGTH - 14)),
    );
    expect(filterOf(MAX_FILTER_LENGTH + 1)).toHaveLength(MAX_FILTER_LENGTH + 1);
    expectInvalidFilter(filterOf(MAX_FILTER_LENGTH + 1), /longer than 8192 characters/);
    expectInvalidFilter(' '.repeat(MAX_FILTER_LENGTH + 1), /longer than 8192 characters/);
  });
});

describe('parsePatchPath', () => {
  it.each<[string, ReturnType<typeof parsePatchPath>]>([
    ['members', { path: at('members') }],
    ['name.givenName', { path: at('name', 'givenName') }],
    [`${ENTERPRISE}:manager`, { path: at('manager', undefined, ENTERPRISE) }],
    [`${ENTERPRISE}:manager.value`, { path: at('manager', 'value', ENTERPRISE) }],
    ['emails[type eq "work"]', { path: at('emails'), filter: cmp(at('type'), 'eq', 'work') }],
    [
      'emails[type eq "work"].value',
      { path: at('emails'), filter: cmp(at('type'), 'eq', 'work'), sub: 'value' },
    ],
    [
      'addresses[type eq "work"].streetAddress',
      { path: at('addresses'), filter: cmp(at('type'), 'eq', 'work'), sub: 'streetAddress' },
    ],
    ['members[value eq "2819c223"]', { path: at('members'), filter: cmp(at('value'), 'eq', '2819c223') }],
    [
      'emails[type eq "work" and primary eq true]',
      {
        path: at('emails'),
        filter: and(cmp(at('type'), 'eq', 'work'), cmp(at('primary'), 'eq', true)),
      },
    ],
  ])('%s', (text, expected) => {
    expect(parsePatchPath(text)).toStrictEqual(expected);
  });

  it.each<[string, RegExp]>([
    ['emails[type eq "work"', /expected "\]"/],
    ['emails[type eq "work"]x', /"x" at position 23/],
    ['emails[type eq "work"].value.x', /"\.value\.x" at position 23/],
    ['name.givenName[type eq "x"]', /"\[" at position 15/],
    ['', /attribute name/],
    ['emails[type eq "work"].value extra', /end of the path|extra/],
    ['emails[]', /"\]"/],
    ['1emails', /attribute name/],
    ['emails[type[x eq 1]]', /cannot nest/],
  ])('%s is an invalidPath', (text, message) => {
    const error = thrown(() => parsePatchPath(text));
    expect(error).toBeInstanceOf(InvalidPathError);
    expect(error).toMatchObject({ status: 400, scimType: 'invalidPath' });
    expect((error as Error).message).toMatch(message);
  });
});

describe('parseFilter: property', () => {
  const tokens = fc.constantFrom(
    'userName',
    'emails',
    'name.givenName',
    'name.givenName.x',
    `${ENTERPRISE}:manager.value`,
    'urn:',
    '.value',
    '$ref',
    '1abc',
    'eq',
    'EQ',
    'ne',
    'co',
    'gt',
    'pr',
    'Pr',
    'and',
    'or',
    'not',
    'NOT',
    '(',
    ')',
    '[',
    ']',
    '"x"',
    '"',
    '\\',
    String.raw`"\u00e9"`,
    String.raw`"\\"`,
    String.raw`"\q"`,
    '-3',
    '1e3',
    '-',
    'true',
    'null',
    "'a'",
    '',
    ' ',
    '\t',
    '\u0000',
    '\ud800',
  );
  const filterish = fc.oneof(
    fc.array(tokens, { maxLength: 40 }).map((t) => t.join(' ')),
    fc.array(tokens, { maxLength: 40 }).map((t) => t.join('')),
    fc.nat({ max: 6000 }).map((n) => nested(n)),
  );

  it('returns a filter or throws InvalidFilterError, never another error', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), filterish), (text) => {
        try {
          const filter = parseFilter(text);
          expect(['compare', 'present', 'and', 'or', 'not', 'valuePath']).toContain(filter.kind);
        } catch (error) {
          if (!(error instanceof InvalidFilterError)) throw error;
          expect(error.status).toBe(400);
          expect(error.message.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('parsePatchPath returns a path or throws InvalidPathError, never another error', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), filterish), (text) => {
        try {
          parsePatchPath(text);
        } catch (error) {
          if (!(error instanceof InvalidPathError)) throw error;
        }
      }),
      { numRuns: 2000 },
    );
  });
});
