// A planned filter's condition is its shape: filters that differ only in their values plan to one
// condition and compile to the same SQL; a value that changes the SQL (an id that is no uuid, a
// constant comparison) changes the condition; and, for random filters, equal keys always mean
// equal SQL (the key is all the SQL depends on).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { statement } from '../../src/db/statement.js';
import { compileCondition } from '../../src/filter/compile.js';
import { parseFilter } from '../../src/filter/parse.js';
import { conditionKey, planFilter } from '../../src/filter/plan.js';
import { resolveFilter } from '../../src/filter/resolve.js';
import { userStorage } from '../../src/resources/user-pages.repository.js';
import { resourceTypes } from '../../src/schema/registry.js';

function planned(filter: string) {
  const plan = planFilter(resolveFilter(parseFilter(filter), resourceTypes.User), userStorage);
  const sql = statement((db) =>
    db.selectFrom('users').select('id').where(compileCondition(plan.condition, userStorage)),
  ).sql;
  return { key: conditionKey(plan.condition), parameters: plan.parameters, sql };
}

const ID = '2819c223-7f76-453a-919d-413861904646';

describe('planFilter', () => {
  it('plans filters that differ only in their values to one key and the same SQL', () => {
    const pairs = [
      ['userName eq "ana@x.example"', 'userName eq "bo@y.example"'],
      ['externalId eq "00u1"', 'externalId eq "00u2"'],
      [`id eq "${ID}"`, 'id eq "00000000-0000-4000-8000-000000000000"'],
      ['emails[type eq "work" and value eq "a@x"]', 'emails[type eq "home" and value eq "b@y"]'],
      ['displayName co "50%"', 'displayName co "x"'],
      ['meta.lastModified gt "2026-01-01T00:00:00Z"', 'meta.lastModified gt "2025-06-30T12:00:00+02:00"'],
      ['not (title eq "x") or active eq true', 'not (title eq "y") or active eq false'],
    ];
    for (const [a, b] of pairs) {
      const [x, y] = [planned(a!), planned(b!)];
      expect(x.key, `${a} / ${b}`).toBe(y.key);
      expect(x.sql).toBe(y.sql);
      expect(x.parameters).not.toEqual(y.parameters);
    }
  });

  it('gives a filter whose values change its SQL another key', () => {
    const pairs = [
      // A value that is no uuid, or not in lower case, matches no id: no comparison at all.
      [`id eq "${ID}"`, 'id eq "nope"'],
      [`id eq "${ID}"`, `id eq "${ID.toUpperCase()}"`],
      // A constant compares here, to true or false.
      ['meta.resourceType eq "User"', 'meta.resourceType eq "Group"'],
      ['schemas eq "urn:ietf:params:scim:schemas:core:2.0:User"', 'schemas eq "urn:x"'],
      ['userName eq "a"', 'userName ne "a"'],
      ['userName eq "a"', 'displayName eq "a"'],
      ['userName eq "a" and title eq "b"', 'userName eq "a" or title eq "b"'],
      ['emails[value eq "a"]', 'emails[value co "a"]'],
    ];
    for (const [a, b] of pairs) {
      const [x, y] = [planned(a!), planned(b!)];
      expect(x.key, `${a} / ${b}`).not.toBe(y.key);
      expect(x.sql).not.toBe(y.sql);
    }
  });

  it('equal keys mean equal SQL, for random filters and random values', () => {
    const path = fc.constantFrom(
      'userName',
      'displayName',
      'title',
      'id',
      'active',
      'meta.created',
      'meta.resourceType',
      'emails.value',
      'groups.value',
      'name.givenName',
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department',
    );
    const value = fc.oneof(
      fc.constantFrom('"a"', '"B"', `"${ID}"`, `"${ID.toUpperCase()}"`, '"User"', '"2026-01-01T00:00:00Z"'),
      fc.boolean().map(String),
    );
    const op = fc.constantFrom('eq', 'ne', 'co', 'sw', 'gt', 'pr');
    const term = (p: string, o: string, v: string) => (o === 'pr' ? `${p} pr` : `${p} ${o} ${v}`);
    // A shape (two terms and how they combine), and two sets of values for it: pairs of one shape
    // come up as often as pairs of two.
    const shape = fc.record({
      paths: fc.tuple(path, path),
      ops: fc.tuple(op, op),
      join: fc.constantFrom(0, 1, 2, 3),
    });
    const values = fc.tuple(value, value);
    const filter = (
      s: { paths: [string, string]; ops: [string, string]; join: number },
      v: [string, string],
    ) => {
      const [a, b] = [term(s.paths[0], s.ops[0], v[0]), term(s.paths[1], s.ops[1], v[1])];
      return [`${a} and ${b}`, `${a} or ${b}`, `not (${a})`, `emails[${a.replace(/^emails\./, '')}]`][
        s.join
      ]!;
    };
    const plannable = (text: string) => {
      try {
        return planned(text);
      } catch {
        return undefined; // a type mismatch (`active co "a"`): refused before it is planned
      }
    };
    let equalKeys = 0;
    fc.assert(
      fc.property(shape, shape, values, values, fc.boolean(), (s1, s2, v1, v2, sameShape) => {
        const a = filter(s1, v1);
        const b = filter(sameShape ? s1 : s2, v2);
        const [x, y] = [plannable(a), plannable(b)];
        if (!x || !y) return;
        if (x.key === y.key) {
          equalKeys++;
          expect(x.sql, `${a} / ${b}`).toBe(y.sql);
        }
        if (x.sql !== y.sql) expect(x.key).not.toBe(y.key);
      }),
      { numRuns: 3000 },
    );
    // The property means something only if equal keys come up.
    expect(equalKeys).toBeGreaterThan(20);
  });
});
