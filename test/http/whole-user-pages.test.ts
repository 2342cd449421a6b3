// Pages that return users whole carry each user's stored attributes as the text Postgres sends
// (users.service.ts renderUserJson): each user's text is, byte for byte, the envelope as
// JSON.stringify writes it (schemas, id, groups, meta), then the stored attributes as jsonb's text.
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { createGroup } from '../helpers/groups.js';
import { type Harness, type Tenant, useHarness } from '../helpers/harness.js';
import { ENTERPRISE, filterQuery, type Json, USER } from '../helpers/scim.js';

let harness: Harness;
let t: Tenant;
let readGroupsDenied: Tenant;

useHarness(async (h) => {
  harness = h;
  const org = await h.createOrg({ name: 'Rendered pages', groupSync: true });
  t = await h.tenantOf(org.id, await h.createToken(org.id));
  readGroupsDenied = await h.tenantOf(org.id, await h.createToken(org.id, { scopes: ['users'] }));
});

// Values whose JSON needs escapes: quotes, backslashes, a slash, control characters, non-ASCII.
const TRICKY = 'Zoë "Q" \\ </b> \u0001\t\n 😀 \u2028';

let full: string;
let bare: string;
beforeAll(async () => {
  full = (
    await t
      .post('/Users', {
        schemas: [USER, ENTERPRISE],
        userName: 'rendered-full@example.com',
        displayName: TRICKY,
        name: { givenName: TRICKY, familyName: 'Ünal' },
        emails: [{ value: 'rendered-full@example.com', type: 'work', primary: true }],
        [ENTERPRISE]: { department: TRICKY, manager: { value: 'm-1' } },
      })
      .expect(201)
  ).body.id;
  bare = (await t.post('/Users', { schemas: [USER], userName: 'rendered-bare' }).expect(201)).body.id;
  // Two groups whose order by displayName differs from their order of creation.
  await createGroup(t, { displayName: `b ${TRICKY}`, members: [{ value: full }] });
  await createGroup(t, { displayName: 'A group', members: [{ value: full }] });
});

/** A user's text in a page, from its row: its envelope, then its stored attributes. */
async function expectedText(id: string, withGroups: boolean): Promise<string> {
  const db = harness.database.db;
  const row = (
    await sql<{ data: string; created_at: Date; updated_at: Date }>`
      select data::text as data, created_at, updated_at from users where org_id = ${t.orgId} and id = ${id}`.execute(
      db,
    )
  ).rows[0]!;
  const groups = (
    await sql<{ id: string; display_name: string }>`
      select g.id, g.display_name from group_members gm join groups g on g.org_id = gm.org_id and g.id = gm.group_id
      where gm.org_id = ${t.orgId} and gm.user_id = ${id} order by g.display_name, g.id`.execute(db)
  ).rows;
  const data = JSON.parse(row.data) as Json;
  const head = JSON.stringify({
    schemas: [USER, ...(ENTERPRISE in data ? [ENTERPRISE] : [])],
    id,
    ...(withGroups && groups.length > 0
      ? {
          groups: groups.map((g) => ({
            value: g.id,
            $ref: `${t.baseUrl}/Groups/${g.id}`,
            display: g.display_name,
            type: 'direct',
          })),
        }
      : {}),
    meta: {
      resourceType: 'User',
      created: row.created_at.toISOString(),
      lastModified: row.updated_at.toISOString(),
      location: `${t.baseUrl}/Users/${id}`,
    },
  });
  return row.data === '{}' ? head : `${head.slice(0, -1)},${row.data.slice(1)}`;
}

/** The texts of a ListResponse's resources, as sent: the response's text between its brackets. */
function resourceTexts(text: string, count: number): string[] {
  const start = text.indexOf('"Resources":[') + '"Resources":['.length;
  const body = text.slice(start, text.lastIndexOf(']'));
  // Each resource starts with its schemas, which no value of these users contains unescaped.
  const texts = body.split(/,(?=\{"schemas":)/);
  expect(texts).toHaveLength(count);
  return texts;
}

describe('a page that returns users whole', () => {
  it('writes a lookup byte for byte as the server would, with groups, extensions and escapes', async () => {
    const res = await t.get(`/Users?${filterQuery('userName eq "rendered-full@example.com"')}`).expect(200);
    expect(resourceTexts(res.text, 1)).toEqual([await expectedText(full, true)]);
  });

  it('writes index and cursor pages byte for byte, a user without groups or extensions too', async () => {
    const expected = [await expectedText(full, true), await expectedText(bare, true)];
    for (const query of ['startIndex=1&count=10', 'cursor&count=10']) {
      const res = await t.get(`/Users?${query}`).expect(200);
      expect(resourceTexts(res.text, 2), query).toEqual(expected);
    }
  });

  it('leaves groups out for a token that may not read them', async () => {
    const res = await readGroupsDenied.get('/Users?startIndex=1&count=10').expect(200);
    expect(resourceTexts(res.text, 2)).toEqual([
      await expectedText(full, false),
      await expectedText(bare, false),
    ]);
  });

  it('gives each user what reading it by id gives', async () => {
    const page = (await t.get('/Users?count=10').expect(200)).body;
    for (const id of [full, bare]) {
      const one = (await t.get(`/Users/${id}`).expect(200)).body;
      expect(page.Resources.find((u: Json) => u.id === id)).toEqual(one);
    }
  });
});
