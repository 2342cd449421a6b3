// Roles in the console over HTTP on a real database: the operator's page (catalogue with scope,
// mappings edited by one form through the roles service and audited, a refusal shown on the page, a
// user's effective roles with their sources), and the setup link's step, where an IT admin maps the
// groups of the link's organization only, on pages that never name scimd.
import type supertest from 'supertest';
import { describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, type Harness, useHarness } from '../helpers/harness.js';
import { GROUP, type Json, USER } from '../helpers/scim.js';

let harness: Harness;
useHarness((h) => {
  harness = h;
});

const cookieOf = (res: supertest.Response, name: string) =>
  ([] as string[])
    .concat(res.headers['set-cookie'] ?? [])
    .find((c) => c.startsWith(`${name}=`))!
    .split(';')[0]!;
const csrfIn = (page: string) => /name="_csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';

type Fields = Record<string, string | string[]>;

/** A signed-in session (an operator's, or a setup link's) that gets pages and posts forms. */
function session(cookie: string, csrf: string) {
  return {
    get: (path: string) => harness.http.get(path).set('Cookie', cookie),
    post: (path: string, fields: Fields = {}) =>
      harness.http
        .post(path)
        .set('Cookie', cookie)
        .type('form')
        .send({ _csrf: csrf, ...fields }),
  };
}

async function operator() {
  const res = await harness.http.post('/console/sign-in').type('form').send({ adminToken: ADMIN_TOKEN });
  const cookie = cookieOf(res, 'scimd_console');
  const page = await harness.http.get('/console').set('Cookie', cookie).expect(200);
  return session(cookie, csrfIn(page.text));
}

async function itAdmin(orgId: string) {
  const { url } = (await harness.admin('post', `/orgs/${orgId}/setup-links`).send({}).expect(201)).body;
  const path = new URL(url).pathname;
  const opened = await harness.http.post(path).type('form').send({}).expect(303);
  const cookie = cookieOf(opened, 'scimd_setup');
  const page = await harness.http.get('/console/setup/okta').set('Cookie', cookie).expect(200);
  return session(cookie, csrfIn(page.text));
}

/** An organization with a catalogue of its own beside the environment's, a group and a member. */
async function orgWithRoles(name: string) {
  const org = await harness.createOrg({ name, groupSync: true });
  await harness
    .admin('put', '/roles')
    .send({
      roles: [{ value: 'viewer', displayName: 'Viewer', description: 'Reads everything', priority: 1 }],
    })
    .expect(200);
  await harness
    .admin('put', `/orgs/${org.id}/roles`)
    .send({
      roles: [{ value: 'admin', displayName: 'Administrator', description: 'Does anything', priority: 10 }],
    })
    .expect(200);
  await harness
    .admin('put', `/orgs/${org.id}/entitlements`)
    .send({ entitlements: [{ value: 'billing', displayName: 'Billing' }] })
    .expect(200);
  const tenant = await harness.tenantOf(org.id, await harness.createToken(org.id));
  const user = (await tenant.post('/Users', { schemas: [USER], userName: `ada@${name}.example` }).expect(201))
    .body as Json;
  const group = (
    await tenant
      .post('/Groups', { schemas: [GROUP], displayName: 'Engineering', members: [{ value: user.id }] })
      .expect(201)
  ).body as Json;
  return { org, tenant, user, group };
}

const mappingsOf = async (orgId: string) =>
  (await harness.admin('get', `/orgs/${orgId}/role-mappings`).expect(200)).body;

// First: the environment's catalogue, which the tests after it fill, is empty still.
describe('console: roles, without a catalogue', () => {
  it('has no roles step while the catalogue has no role', async () => {
    const org = await harness.createOrg({ name: 'Vandelay', groupSync: true });
    const admin = await itAdmin(org.id);
    expect((await admin.get('/console/setup').expect(200)).text).not.toContain('/console/setup/roles');
    const missing = await admin.get('/console/setup/roles').expect(404);
    expect(missing.text).not.toMatch(/scimd/i);
  });
});

describe('console: roles, for the operator', () => {
  it('shows the catalogue with its scope, and saves mappings, default and mode through the roles service, audited', async () => {
    const { org, user, group } = await orgWithRoles('acme');
    const op = await operator();
    const page = (await op.get(`/console/orgs/${org.id}/roles`).expect(200)).text;
    expect((await op.get(`/console/orgs/${org.id}`).expect(200)).text).toContain(
      `/console/orgs/${org.id}/roles`,
    );
    expect(page).toContain('Administrator (admin)');
    expect(page).toMatch(
      /Viewer<\/div><\/td><td data-label="Value"><div><code>viewer<\/code>.*every organization/s,
    );
    expect(page).toMatch(/<code>admin<\/code>.*this organization/s);
    expect(page).toContain('<code>billing</code>');
    expect(page).toContain(`name="group:${group.id}"`);
    expect(page).toContain('aria-label="Role for Engineering"');

    const saved = await op
      .post(`/console/orgs/${org.id}/roles`, {
        [`group:${group.id}`]: 'admin',
        'name:0': 'Sales',
        'nameRole:0': 'viewer',
        'name:1': '',
        'nameRole:1': '',
        defaultRole: 'viewer',
        mode: 'single',
        complete: 'true',
      })
      .expect(303);
    expect(saved.headers.location).toBe(`/console/orgs/${org.id}/roles?done=mappings#mappings`);
    expect(await mappingsOf(org.id)).toEqual({
      mappings: [
        { group: { id: group.id }, role: 'admin' },
        { group: { displayName: 'Sales' }, role: 'viewer' },
      ],
      defaultRole: 'viewer',
      mode: 'single',
    });
    const after = (await op.get(`/console/orgs/${org.id}/roles?done=mappings`).expect(200)).text;
    expect(after).toContain('Mappings saved');
    expect(after).toContain('value="Sales"');
    expect(after).toMatch(/<input type="radio" name="mode" value="single" checked>/);

    // A user's effective roles, by userName in any case or by id, with their sources in words.
    const lookedUp = (await op.get(`/console/orgs/${org.id}/roles?user=ADA%40acme.example`).expect(200)).text;
    expect(lookedUp).toContain(`<code>${user.id}</code>`);
    expect(lookedUp).toMatch(/<code>admin<\/code>.*group “Engineering”/s);
    const byId = (await op.get(`/console/orgs/${org.id}/roles?user=${user.id}`).expect(200)).text;
    expect(byId).toContain('group “Engineering”');
    const nobody = await op.get(`/console/orgs/${org.id}/roles?user=nobody`).expect(404);
    expect(nobody.text).toContain('No user of this organization has the id or userName “nobody”');

    const events = (await harness.admin('get', `/orgs/${org.id}/events?limit=100`).expect(200)).body
      .events as Json[];
    expect(events.find((e) => e.action === 'role_mappings.put')).toMatchObject({
      status: 200,
      actor: expect.stringMatching(/^console:/),
    });
  });

  it('answers a role outside the catalogue with a 400 page that names it, and keeps the mappings', async () => {
    const { org, group } = await orgWithRoles('globex');
    const op = await operator();
    const refused = await op
      .post(`/console/orgs/${org.id}/roles`, { [`group:${group.id}`]: 'superuser', complete: 'true' })
      .expect(400);
    expect(refused.text).toContain(
      'Not saved: Roles not in the organization&#39;s catalogue: &quot;superuser&quot;',
    );
    expect(refused.text).toContain('<h2 id="mappings">');
    expect(await mappingsOf(org.id)).toEqual({ mappings: [], defaultRole: null, mode: 'multiple' });
    // A form cut short on the way (its last field missing) changes nothing either.
    await op.post(`/console/orgs/${org.id}/roles`, { [`group:${group.id}`]: 'admin' }).expect(400);
    expect(await mappingsOf(org.id)).toEqual({ mappings: [], defaultRole: null, mode: 'multiple' });
    const events = (await harness.admin('get', `/orgs/${org.id}/events?limit=100`).expect(200)).body
      .events as Json[];
    expect(events.filter((e) => e.action === 'role_mappings.put').map((e) => e.status)).toEqual([400, 400]);
  });
});

describe('console: roles, the groups to choose from', () => {
  it('lists the first 200 groups by name, mapped ones first, and finds others by part of their name, % and _ literally', async () => {
    const { org, tenant } = await orgWithRoles('massive');
    const names = [
      ...Array.from({ length: 205 }, (_, i) => `Team ${String(i).padStart(3, '0')}`),
      '100% Sales',
      '100 Sales',
      'zz last',
    ];
    for (let i = 0; i < names.length; i += 25)
      await Promise.all(
        names
          .slice(i, i + 25)
          .map((displayName) => tenant.post('/Groups', { schemas: [GROUP], displayName }).expect(201)),
      );
    const last = (await tenant.get('/Groups?filter=displayName%20eq%20%22zz%20last%22').expect(200)).body
      .Resources[0] as Json;
    await harness
      .admin('put', `/orgs/${org.id}/role-mappings`)
      .send({ mappings: [{ group: { id: last.id }, role: 'admin' }] })
      .expect(200);
    const op = await operator();
    const page = (await op.get(`/console/orgs/${org.id}/roles`).expect(200)).text;
    expect(page).toContain(
      'The first 200 groups by name: search to find the others. Mapped groups come first.',
    );
    const groupRows = (text: string) =>
      [...text.matchAll(/aria-label="Role for (?!group name )([^"]+)"/g)].map((m) => m[1]);
    const rows = groupRows(page);
    expect(rows[0]).toBe('zz last');
    expect(rows.slice(1, 4)).toEqual(['100 Sales', '100% Sales', 'Engineering']);
    expect(rows).toHaveLength(201);
    expect(rows).not.toContain('Team 199');

    const percent = (await op.get(`/console/orgs/${org.id}/roles?q=${encodeURIComponent('0%')}`).expect(200))
      .text;
    expect(groupRows(percent)).toEqual(['zz last', '100% Sales']);
    expect(percent).toContain('1 group whose name contains “0%”');
    const underscore = (await op.get(`/console/orgs/${org.id}/roles?q=_`).expect(200)).text;
    expect(groupRows(underscore)).toEqual(['zz last']);
    expect(underscore).toContain('0 groups whose name contains “_”');
    const found = (await op.get(`/console/orgs/${org.id}/roles?q=team%20204`).expect(200)).text;
    expect(found).toContain('aria-label="Role for Team 204"');
  });
});

describe('console: roles, on a setup link', () => {
  it('lets the IT admin map the groups of its own organization, and never another’s', async () => {
    const mine = await orgWithRoles('initech');
    const other = await orgWithRoles('hooli');
    const admin = await itAdmin(mine.org.id);

    const home = (await admin.get('/console/setup').expect(200)).text;
    expect(home).toContain('href="/console/setup/roles"');
    const okta = (await admin.get('/console/setup/okta').expect(200)).text;
    expect(okta).toContain('Map your groups to roles');
    expect(okta).toContain('Roles and entitlements (Okta Identity Governance)');
    const entra = (await admin.get('/console/setup/entra').expect(200)).text;
    expect(entra).toContain('AppRoleAssignmentsComplex([appRoleAssignments])');

    const page = (await admin.get('/console/setup/roles').expect(200)).text;
    expect(page).toContain('Administrator');
    expect(page).toContain('Does anything');
    expect(page).not.toContain('(admin)');
    expect(page).toContain(`name="group:${mine.group.id}"`);
    expect(page).not.toContain(other.group.id);
    for (const text of [home, okta, entra, page]) expect(text).not.toMatch(/scimd/i);
    const search = (await admin.get('/console/setup/roles?q=engin').expect(200)).text;
    expect(search).toContain('1 group whose name contains “engin”');
    expect((await admin.get('/console/setup/roles?q=zzz').expect(200)).text).toContain(
      'No group’s name contains',
    );

    await admin
      .post('/console/setup/roles', {
        [`group:${mine.group.id}`]: 'admin',
        'name:0': 'Contractors',
        'nameRole:0': 'viewer',
        defaultRole: 'viewer',
        mode: 'multiple',
        complete: 'true',
      })
      .expect(303);
    expect(await mappingsOf(mine.org.id)).toMatchObject({
      mappings: [{ group: { id: mine.group.id } }, { group: { displayName: 'Contractors' } }],
      defaultRole: 'viewer',
    });
    const saved = (await admin.get('/console/setup/roles?done=mappings').expect(200)).text;
    expect(saved).toContain('Saved: people get these roles from now on.');
    expect(saved).not.toMatch(/scimd/i);

    // Another organization's group is no group of the link's organization: refused, on a white-label page.
    const refused = await admin
      .post('/console/setup/roles', { [`group:${other.group.id}`]: 'admin', complete: 'true' })
      .expect(400);
    expect(refused.text).toContain('No groups of the organization with these ids');
    expect(refused.text).not.toMatch(/scimd/i);
    expect(await mappingsOf(other.org.id)).toEqual({ mappings: [], defaultRole: null, mode: 'multiple' });
    // The operator's pages are not the link's.
    await admin.get(`/console/orgs/${other.org.id}/roles`).expect(302);
    await admin.post(`/console/orgs/${other.org.id}/roles`, { complete: 'true' }).expect(401);
    expect(await mappingsOf(other.org.id)).toEqual({ mappings: [], defaultRole: null, mode: 'multiple' });

    const events = (await harness.admin('get', `/orgs/${mine.org.id}/events?limit=100`).expect(200)).body
      .events as Json[];
    expect(
      events.filter((e) => e.action === 'role_mappings.put').map((e) => [e.status, e.actor.split(':')[0]]),
    ).toEqual(
      expect.arrayContaining([
        [200, 'setup_link'],
        [400, 'setup_link'],
      ]),
    );
  });
});
