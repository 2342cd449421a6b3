// The SQL a filter compiles to, and its parameters: the shapes IdPs send, the case rules, escaping.
import { describe, expect, it } from 'vitest';
import { statement } from '../../src/db/statement.js';
import { compileCondition, filterValues } from '../../src/filter/compile.js';
import { parseFilter } from '../../src/filter/parse.js';
import { planFilter } from '../../src/filter/plan.js';
import { resolveFilter } from '../../src/filter/resolve.js';
import { userStorage } from '../../src/resources/user-pages.repository.js';
import { resourceTypes } from '../../src/schema/registry.js';

function compile(filter: string) {
  const plan = planFilter(resolveFilter(parseFilter(filter), resourceTypes.User), userStorage);
  const query = statement((db) =>
    db.selectFrom('users').select('id').where(compileCondition(plan.condition, userStorage)),
  );
  const { sql, parameters } = query.bind(filterValues(plan));
  return { sql: sql.replace(/^select "id" from "users" where /, '').replace(/\s+/g, ' '), parameters };
}

describe('compileCondition (users)', () => {
  it.each([
    ['userName eq "Ana@X"', 'lower("users"."user_name") = lower($1)', ['Ana@X']],
    ['USERNAME Eq "Ana@X"', 'lower("users"."user_name") = lower($1)', ['Ana@X']],
    ['externalId eq "AbC"', '"users"."external_id" = $1', ['AbC']],
    ['active eq "True"', '"users"."active" = $1::boolean', [true]],
    ['active ne false', '"users"."active" <> $1::boolean', [false]],
    [
      'meta.created gt "2026-01-01T00:00:00Z"',
      '"users"."created_at" > $1::timestamptz',
      ['2026-01-01T00:00:00.000Z'],
    ],
    // Without a zone, UTC (not the server's local time); with an offset, that offset.
    [
      'meta.created gt 2026-01-01T00:00:00',
      '"users"."created_at" > $1::timestamptz',
      ['2026-01-01T00:00:00.000Z'],
    ],
    [
      'meta.created lt "2026-01-01T02:00:00+02:00"',
      '"users"."created_at" < $1::timestamptz',
      ['2026-01-01T00:00:00.000Z'],
    ],
    // A bare number compared with a string attribute keeps its spelling.
    ['externalId eq 1.50', '"users"."external_id" = $1', ['1.50']],
    ['title pr', `nullif(("users"."data"->>'title'), '') is not null`, []],
    [
      'name.givenName sw "An"',
      `lower((("users"."data"->'name')->>'givenName')) like lower($1) escape '\\'`,
      ['An%'],
    ],
    [
      'displayName co "50%_off"',
      `lower("users"."display_name") like lower($1) escape '\\'`,
      ['%50\\%\\_off%'],
    ],
    ['title gt "m"', `(lower(("users"."data"->>'title'))) collate "C" > lower($1)`, ['m']],
    [
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department eq "Sales"',
      `lower((("users"."data"->'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User')->>'department')) = lower($1)`,
      ['Sales'],
    ],
    // Entra's legacy reference check names the enterprise manager without its URN.
    [
      'manager eq "m-1"',
      `lower(((("users"."data"->'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User')->'manager')->>'value')) = lower($1)`,
      ['m-1'],
    ],
    ['meta.resourceType eq "User"', 'true', []],
    // resourceType is caseExact (RFC 7643 §3.1).
    ['meta.resourceType eq "user"', 'false', []],
    ['meta.resourceType eq "Group"', 'false', []],
  ])('%s', (filter, expected, parameters) => {
    const out = compile(filter);
    expect(out.sql).toBe(expected);
    expect(out.parameters).toEqual(parameters);
  });

  it('compares id as a uuid, and a value that is no uuid (or not in lower case) as matching nothing', () => {
    const id = '2819c223-7f76-453a-919d-413861904646';
    expect(compile(`id eq "${id}"`)).toEqual({ sql: '"users"."id" = $1::uuid', parameters: [id] });
    expect(compile('id eq "nope"').sql).toBe('false');
    expect(compile(`id eq "${id.toUpperCase()}"`).sql).toBe('false');
  });

  it('keeps a value path to one element, and probes the GIN index for an emails value', () => {
    const out = compile('emails[type eq "work"].value eq "Ana@X"');
    expect(out.sql).toBe(
      `("users"."email_values" @> jsonb_build_array(lower($1)) and exists (select 1 from jsonb_array_elements(coalesce(("users"."data"->'emails'), '[]'::jsonb)) as e(v) where (lower((e.v->>'type')) = lower($2) and lower((e.v->>'value')) = lower($3))))`,
    );
    expect(out.parameters).toEqual(['Ana@X', 'work', 'Ana@X']);
  });

  it('turns a comparison on a multi-valued attribute into an any-element test', () => {
    expect(compile('emails co "@x"').sql).toBe(
      `exists (select 1 from jsonb_array_elements(coalesce(("users"."data"->'emails'), '[]'::jsonb)) as e(v) where lower((e.v->>'value')) like lower($1) escape '\\')`,
    );
    expect(compile('emails pr').sql).toBe(
      `exists (select 1 from jsonb_array_elements(coalesce(("users"."data"->'emails'), '[]'::jsonb)) as e(v) where true)`,
    );
  });

  it('reads groups from the membership rows', () => {
    const id = '2819c223-7f76-453a-919d-413861904646';
    const out = compile(`groups.value eq "${id}"`);
    expect(out.sql).toBe(
      'exists (select 1 from group_members as gm join groups as g on g.org_id = gm.org_id and g.id = gm.group_id where gm.org_id = "users"."org_id" and gm.user_id = "users"."id" and "gm"."group_id" = $1::uuid)',
    );
    expect(out.parameters).toEqual([id]);
  });

  it('uses two-valued logic under not, and keeps and/or precedence', () => {
    expect(compile('not (title eq "x")').sql).toBe(
      `not coalesce(lower(("users"."data"->>'title')) = lower($1), false)`,
    );
    expect(compile('userName eq "a" or userName eq "b" and active eq true').sql).toBe(
      '(lower("users"."user_name") = lower($1) or (lower("users"."user_name") = lower($2) and "users"."active" = $3::boolean))',
    );
  });
});
