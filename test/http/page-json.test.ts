// A page returns each user's stored attributes as the database wrote them, joined into the rest of
// the user unparsed; a user on a page is the same JSON as the user read by id, whatever it carries.
import { expect, it } from 'vitest';
import { groupCalls } from '../helpers/groups.js';
import { type Harness, type Tenant, useHarness } from '../helpers/harness.js';
import { ENTERPRISE, GROUP, USER } from '../helpers/scim.js';

let harness: Harness;
let t: Tenant;
const { groupTenant } = groupCalls(() => harness);
useHarness(async (h) => {
  harness = h;
  t = await groupTenant();
});

const USERS = [
  { userName: 'plain@corp.example' },
  { userName: 'enterprise@corp.example', [ENTERPRISE]: { department: 'Sales', manager: { value: 'm-1' } } },
  // A value that spells the extension's key, with its quotes and the space jsonb writes after a key.
  { userName: 'spelled@corp.example', title: `"${ENTERPRISE}": {}`, nickName: 'a\\"b' },
  {
    userName: 'text@corp.example',
    displayName: 'Zoë 😀 \u2028 tab\t line\n quote" backslash\\',
    name: { givenName: '', familyName: 'Ruiz' },
    emails: [{ value: 'text@corp.example', type: 'work', primary: true }],
    active: false,
  },
];

it('renders every user of a page as the same JSON as the user read by id', async () => {
  const ids: string[] = [];
  for (const user of USERS)
    ids.push((await t.post('/Users', { schemas: [USER], ...user }).expect(201)).body.id);
  await t
    .post('/Groups', { schemas: [GROUP], displayName: 'Page', members: [{ value: ids[1] }] })
    .expect(201);
  for (const path of ['/Users?count=10', '/Users?filter=userName%20sw%20%22%22&count=10']) {
    const page = await t.get(path).expect(200);
    expect(page.headers['content-type']).toBe('application/scim+json');
    expect(page.body.itemsPerPage).toBe(USERS.length);
    for (const listed of page.body.Resources) {
      const byId = await t.get(`/Users/${listed.id}`).expect(200);
      expect(listed).toEqual(byId.body);
    }
  }
  const cursorPage = await t.get('/Users?cursor=&count=10').expect(200);
  expect(cursorPage.body.Resources).toHaveLength(USERS.length);
  const withEnterprise = cursorPage.body.Resources.find((u: { id: string }) => u.id === ids[1]);
  expect(withEnterprise.schemas).toEqual([USER, ENTERPRISE]);
  expect(withEnterprise.groups).toMatchObject([{ display: 'Page' }]);
  const spelled = cursorPage.body.Resources.find((u: { id: string }) => u.id === ids[2]);
  expect(spelled.schemas).toEqual([USER]);
  expect(spelled.title).toBe(`"${ENTERPRISE}": {}`);
});

it('projects a page that names attributes as it projects one user', async () => {
  const page = await t.get('/Users?attributes=userName&count=10').expect(200);
  for (const listed of page.body.Resources) {
    expect(Object.keys(listed).sort()).toEqual(['id', 'schemas', 'userName']);
  }
});
