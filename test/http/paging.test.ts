// Index and cursor paging (RFC 7644 §3.4.2.4, RFC 9865) over HTTP, in several orders.
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import type { Statement } from '../../src/db/statement.js';
import { compileSortKey, resolveSort } from '../../src/filter/sort.js';
import { groupPageStatement } from '../../src/resources/groups.repository.js';
import { groupStorage } from '../../src/resources/groups.storage.js';
import { type ListQuery, listValues } from '../../src/resources/list-query.js';
import { userPageStatement, userStorage } from '../../src/resources/user-pages.repository.js';
import { resourceTypes } from '../../src/schema/registry.js';
import { type Harness, type Tenant, useHarness } from '../helpers/harness.js';

let harness: Harness;
let t: Tenant;
const TOTAL = 23;

useHarness(async (h) => {
  harness = h;
  t = await h.tenant();
  for (let i = 0; i < TOTAL; i++) {
    // Some users without a displayName and some sharing one, so sorting meets nulls and ties.
    const displayName = i % 4 === 0 ? undefined : `Name ${String.fromCharCode(65 + (i % 5))}`;
    await t
      .post('/Users', {
        userName: `user-${String(i).padStart(2, '0')}`,
        ...(displayName ? { displayName } : {}),
      })
      .expect(201);
  }
});

type Page = {
  Resources: { userName: string }[];
  nextCursor?: string;
  previousCursor?: string;
  totalResults: number;
};

async function page(query: string): Promise<Page> {
  const res = await t.get(`/Users?attributes=userName&${query}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

const names = (p: Page) => p.Resources.map((u) => u.userName);

it.each([
  ['creation order', ''],
  ['userName descending', 'sortBy=userName&sortOrder=descending'],
  ['displayName with nulls and ties', 'sortBy=displayName'],
  ['displayName descending', 'sortBy=displayName&sortOrder=descending'],
  ['filtered', 'filter=userName%20co%20%221%22&sortBy=meta.created'],
])(
  'a cursor walk in %s visits every row once, forwards and back, matching index paging',
  async (_, order) => {
    const all = names(await page(`${order}&count=1000`));
    const forwards: Page[] = [await page(`${order}&cursor&count=5`)];
    expect(forwards[0]!.previousCursor).toBeUndefined();
    while (forwards.at(-1)!.nextCursor) {
      forwards.push(await page(`${order}&count=5&cursor=${forwards.at(-1)!.nextCursor}`));
      expect(forwards.length).toBeLessThan(20);
    }
    expect(forwards.flatMap(names)).toEqual(all);
    expect(forwards.every((p) => p.totalResults === all.length)).toBe(true);
    expect(forwards.slice(1).every((p) => p.previousCursor)).toBe(true);

    const backwards: Page[] = [forwards.at(-1)!];
    while (backwards.at(-1)!.previousCursor) {
      backwards.push(await page(`${order}&count=5&cursor=${backwards.at(-1)!.previousCursor}`));
      expect(backwards.length).toBeLessThan(20);
    }
    expect(backwards.reverse().flatMap(names)).toEqual(all);
    expect(backwards.map(names)).toEqual(forwards.map(names));
  },
);

it('keeps going without repeats when rows are added behind the cursor', async () => {
  const first = await page('sortBy=userName&cursor&count=4');
  await t.post('/Users', { userName: 'aaa-added-later' }).expect(201);
  const second = await page(`sortBy=userName&count=4&cursor=${first.nextCursor}`);
  expect(names(second)[0]! > names(first).at(-1)!).toBe(true);
  expect(names(second)).not.toContain('aaa-added-later');
  await t
    .delete(
      `/Users/${(await t.get('/Users?filter=userName%20eq%20%22aaa-added-later%22')).body.Resources[0].id}`,
    )
    .expect(204);
});

it('answers count=0 with the total only', async () => {
  const res = await page('cursor&count=0');
  expect(res).toMatchObject({ totalResults: TOTAL, itemsPerPage: 0, Resources: [] });
  expect(res.nextCursor).toBeUndefined();
});

/** The cursor with one character in its middle changed (each carries six whole bits of it). */
const tampered = (c: string) => {
  const at = Math.floor(c.length / 2);
  return `${c.slice(0, at)}${c[at] === 'A' ? 'B' : 'A'}${c.slice(at + 1)}`;
};

it.each([
  ['a cursor that was tampered with', (c: string) => `cursor=${tampered(c)}&count=5`, 'invalidCursor'],
  ['a cursor of another query', (c: string) => `cursor=${c}&count=5&sortBy=displayName`, 'invalidCursor'],
  ['another count', (c: string) => `cursor=${c}&count=6`, 'invalidCount'],
  ['cursor and startIndex together', (c: string) => `cursor=${c}&count=5&startIndex=3`, 'invalidValue'],
  ['garbage', () => 'cursor=%F0%9F%92%A9&count=5', 'invalidCursor'],
])('refuses %s with 400 %s', async (_, query, scimType) => {
  const first = await page('cursor&count=5');
  const res = await t.get(`/Users?${query(first.nextCursor!)}`);
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ status: '400', scimType });
});

it('refuses a cursor of another organization with invalidCursor', async () => {
  const other = await harness.tenant();
  await other.post('/Users', { userName: 'one' }).expect(201);
  await other.post('/Users', { userName: 'two' }).expect(201);
  const theirs = (await other.get('/Users?cursor&count=1').expect(200)).body.nextCursor;
  const res = await t.get(`/Users?cursor=${theirs}&count=1`);
  expect(res.status).toBe(400);
  expect(res.body.scimType).toBe('invalidCursor');
});

it('pages through POST /.search with a cursor in the body', async () => {
  const body = {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'],
    sortBy: 'userName',
    count: 10,
    cursor: '',
  };
  const first = (await t.post('/Users/.search', body).expect(200)).body;
  const second = (await t.post('/Users/.search', { ...body, cursor: first.nextCursor }).expect(200)).body;
  expect([...first.Resources, ...second.Resources].map((u: { userName: string }) => u.userName)).toEqual(
    names(await page('sortBy=userName&count=20')),
  );
});

it('advertises both paging methods in ServiceProviderConfig', async () => {
  const spc = (await t.get('/ServiceProviderConfig').expect(200)).body;
  expect(spc.pagination).toMatchObject({
    cursor: true,
    index: true,
    defaultPaginationMethod: 'index',
    cursorTimeout: expect.any(Number),
  });
  expect(spc.filter.supported).toBe(true);
  expect(spc.sort.supported).toBe(true);
});

it('reads the sort key as text only for a cursor page, which writes it into its cursors', async () => {
  const db = harness.database.db;
  // Straight into the table: this organization does not sync groups.
  await sql`insert into groups (org_id, id, display_name, data, created_at, updated_at)
            values (${t.orgId}::uuid, gen_random_uuid(), 'Paged', '{"displayName":"Paged"}', now(), now())`.execute(
    db,
  );
  const query = (type: 'User' | 'Group', page: ListQuery['page']): ListQuery => {
    const storage = type === 'User' ? userStorage : groupStorage;
    const sort = resolveSort(resourceTypes[type]);
    return {
      filter: undefined,
      sortKey: compileSortKey(sort, storage, 'created_at'),
      descending: false,
      page,
    };
  };
  const offset = { kind: 'offset', offset: 0, limit: 5 } as const;
  const keyset = { kind: 'keyset', after: undefined, backwards: false, limit: 5 } as const;
  const rows = async (statement: Statement<unknown>, listing: ListQuery) =>
    (await statement.run(db, listValues(t.orgId, listing))).rows as Record<string, unknown>[];
  for (const groups of [false, true]) {
    const index = await rows(userPageStatement(query('User', offset), groups), query('User', offset));
    expect(index).toHaveLength(5);
    expect(index.every((row) => !('sort_value' in row))).toBe(true);
    const cursor = await rows(userPageStatement(query('User', keyset), groups), query('User', keyset));
    expect(cursor.every((row) => typeof row.sort_value === 'string')).toBe(true);
  }
  const groupIndex = await rows(groupPageStatement(query('Group', offset)), query('Group', offset));
  expect(groupIndex.length).toBeGreaterThan(0);
  expect(groupIndex.every((row) => !('sort_value' in row))).toBe(true);
  const groupCursor = await rows(groupPageStatement(query('Group', keyset)), query('Group', keyset));
  expect(groupCursor.every((row) => typeof row.sort_value === 'string')).toBe(true);
});
