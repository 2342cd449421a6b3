// An equality filter on an organization's own string attribute is served by an index: EXPLAIN the
// exact page query the server runs, on a seeded table, and check the answer over HTTP.
import { CompiledQuery, sql } from 'kysely';
import { expect, it } from 'vitest';
import { parseFilter } from '../../src/filter/parse.js';
import { planFilter } from '../../src/filter/plan.js';
import { resolveFilter } from '../../src/filter/resolve.js';
import { compileSortKey, resolveSort } from '../../src/filter/sort.js';
import { type ListQuery, listValues } from '../../src/resources/list-query.js';
import { userPageStatement, userStorage } from '../../src/resources/user-pages.repository.js';
import { parseCustomSchema, registryWith } from '../../src/schema/custom-schemas.js';
import { type Harness, type Tenant, useHarness } from '../helpers/harness.js';
import { filterQuery } from '../helpers/scim.js';

const ACME = 'urn:ietf:params:scim:schemas:extension:acme:2.0:User';
const definition = {
  id: ACME,
  attributes: [
    { name: 'costCenter', type: 'string' },
    { name: 'code', type: 'string', caseExact: true },
    { name: 'office', type: 'complex', subAttributes: [{ name: 'building', type: 'string' }] },
  ],
};
const SEEDED = 5000;

let harness: Harness;
let t: Tenant;
useHarness(async (h) => {
  harness = h;
  t = await h.tenant();
  await h.admin('put', `/orgs/${t.orgId}/schemas/${ACME}`).send(definition).expect(201);
  const other = await h.tenant();
  for (const orgId of [t.orgId, other.orgId]) {
    await sql`
      insert into users (org_id, id, user_name, active, data, created_at, updated_at)
      select ${orgId}::uuid, gen_random_uuid(), 'user' || i || '@corp.example', true,
             jsonb_build_object('userName', 'user' || i || '@corp.example', ${ACME}::text,
               jsonb_build_object('costCenter', 'CC-' || i, 'code', 'Code-' || i,
                 'office', jsonb_build_object('building', 'B' || (i % 50)))),
             now() - (i || ' seconds')::interval, now()
      from generate_series(1, ${SEEDED}) as i`.execute(h.database.db);
  }
  await sql`analyze users`.execute(h.database.db);
});

const type = registryWith([parseCustomSchema(ACME, definition)]).types.User;

async function plan(filter: string): Promise<string> {
  const query: ListQuery = {
    filter: planFilter(resolveFilter(parseFilter(filter), type), userStorage),
    sortKey: compileSortKey(resolveSort(type), userStorage, 'created_at'),
    descending: false,
    page: { kind: 'offset', offset: 0, limit: 100 },
  };
  const bound = userPageStatement(query, false).bind(listValues(t.orgId, query));
  const result = await harness.database.db.executeQuery<{ 'QUERY PLAN': unknown }>(
    CompiledQuery.raw(`explain (format json) ${bound.sql}`, [...bound.parameters]),
  );
  return JSON.stringify(result.rows[0]!['QUERY PLAN']);
}

it('finds a custom string by equality through the index of extension values', async () => {
  for (const filter of [
    `${ACME}:costCenter eq "cc-42"`,
    `${ACME}:code eq "Code-42"`,
    `${ACME}:office.building eq "b7"`,
    `${ACME}:costCenter eq "CC-42" and active eq true`,
  ]) {
    const text = await plan(filter);
    expect(text, filter).toContain('users_extension_values');
    expect(text, filter).not.toMatch(/"Node Type":"Seq Scan"/);
  }
});

it('answers as the comparison says: case-insensitive unless caseExact, within the organization', async () => {
  const ids = async (filter: string) =>
    (await t.get(`/Users?${filterQuery(filter)}&attributes=userName`).expect(200)).body.Resources.map(
      (u: { userName: string }) => u.userName,
    );
  expect(await ids(`${ACME}:costCenter eq "cc-42"`)).toEqual(['user42@corp.example']);
  expect(await ids(`${ACME}:code eq "Code-42"`)).toEqual(['user42@corp.example']);
  expect(await ids(`${ACME}:code eq "code-42"`)).toEqual([]);
  expect((await ids(`${ACME}:office.building eq "b7"`)).length).toBe(SEEDED / 50);
});
