// Okta's provisioning flows against a live scimd, request by request as Okta's client sends them:
// import paging, the existence check before a create, create,
// profile push by PUT, deactivation and reactivation by a pathless PATCH, Push Groups, and unassignment
// (Okta never deletes a user). The import runs in an organization of its own, since it counts every
// user; Push Groups is one sequence of steps on one group.
import { describe, expect, it } from 'vitest';
import { type LiveResponse, useLiveServer } from '../live-server.js';
import { sequence } from '../sequence.js';
import {
  CLIENT_HEADERS,
  CLIENT_JSON_HEADERS,
  CLIENT_WRITE_HEADERS,
  GROUP,
  LIST,
  patchOp,
  SCIM_ERROR,
  USER,
} from './okta.js';

const live = useLiveServer();

// biome-ignore lint/suspicious/noExplicitAny: response bodies are JSON
type Json = any;

const read = (path: string) => live.scim('GET', path, { headers: CLIENT_HEADERS });
const write = (
  method: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = CLIENT_WRITE_HEADERS,
) => live.scim(method, path, { headers, body });

/** Okta's existence check: the filter encoded with %20 and %22 (and %40 for @), first page of 100. */
const existenceCheck = (userName: string) =>
  read(`/Users?filter=userName%20eq%20%22${encodeURIComponent(userName)}%22&startIndex=1&count=100`);

function ok(res: LiveResponse, status: number): Json {
  expect(res.status, res.text).toBe(status);
  return res.body;
}

const userLocation = (id: string) => `${live.baseUrl}/Users/${id}`;
const groupLocation = (id: string) => `${live.baseUrl}/Groups/${id}`;

/** A create body as Okta sends it. */
function oktaUser(userName: string, givenName: string, familyName: string, externalId: string) {
  return {
    schemas: [USER],
    userName,
    name: { givenName, familyName },
    emails: [{ primary: true, value: userName, type: 'work' }],
    displayName: `${givenName} ${familyName}`,
    locale: 'en-US',
    externalId,
    groups: [],
    password: `Pw-${externalId}-!9`,
    active: true,
  };
}

/** What scimd answers for an Okta create body: the same attributes, minus password and groups, plus id and meta. */
function expectedUser(sent: ReturnType<typeof oktaUser>, id: string): Json {
  const { password: _password, groups: _groups, ...stored } = sent;
  return {
    ...stored,
    id,
    meta: {
      resourceType: 'User',
      created: expect.any(String),
      lastModified: expect.any(String),
      location: userLocation(id),
    },
  };
}

async function createOktaUser(sent: ReturnType<typeof oktaUser>): Promise<Json> {
  const res = await write('POST', '/Users', sent, CLIENT_JSON_HEADERS);
  if (res.status !== 201) throw new Error(`creating ${sent.userName}: ${res.status} ${res.text}`);
  return res.body;
}

/** The summary of a ListResponse that the tests compare whole. */
const listSummary = (body: Json) => ({
  schemas: body.schemas,
  totalResults: body.totalResults,
  startIndex: body.startIndex,
  itemsPerPage: body.itemsPerPage,
  ids: (body.Resources as Json[] | undefined)?.map((r) => r.id),
});

describe('(a) import: GET /Users?startIndex=N&count=100, startIndex += 100', () => {
  it('returns every one of 250 users exactly once, in a stable order, with integer paging fields', async () => {
    const tenant = await live.newTenant();
    const read = (path: string) => live.scim('GET', path, { headers: CLIENT_HEADERS, tenant });
    const created: string[] = [];
    for (let i = 0; i < 250; i++) {
      const n = String(i).padStart(3, '0');
      const sent = oktaUser(`import.${n}@corp.example`, 'Import', `User${n}`, `00uimp${n}`);
      const res = await live.scim('POST', '/Users', { headers: CLIENT_JSON_HEADERS, body: sent, tenant });
      created.push(ok(res, 201).id);
    }

    const importAll = async () => {
      const pages: Json[] = [];
      for (let startIndex = 1; ; startIndex += 100) {
        const body = ok(await read(`/Users?startIndex=${startIndex}&count=100`), 200);
        pages.push(body);
        if (startIndex + 100 > body.totalResults) break;
      }
      return pages;
    };

    const first = await importAll();
    expect(first.map((p) => ({ ...listSummary(p), ids: p.Resources.length }))).toEqual([
      { schemas: [LIST], totalResults: 250, startIndex: 1, itemsPerPage: 100, ids: 100 },
      { schemas: [LIST], totalResults: 250, startIndex: 101, itemsPerPage: 100, ids: 100 },
      { schemas: [LIST], totalResults: 250, startIndex: 201, itemsPerPage: 50, ids: 50 },
    ]);
    const ids = first.flatMap((p) => p.Resources.map((r: Json) => r.id));
    // Every user once, in creation order (README: "order is creation order").
    expect(ids).toEqual(created);

    // A second import sees the same order.
    const second = await importAll();
    expect(second.flatMap((p) => p.Resources.map((r: Json) => r.id))).toEqual(ids);

    // One page past the end: empty, still a well-formed ListResponse.
    const past = ok(await read('/Users?startIndex=301&count=100'), 200);
    expect(past).toEqual({
      schemas: [LIST],
      totalResults: 250,
      startIndex: 301,
      itemsPerPage: 0,
      Resources: [],
    });
  });
});

describe('(b) existence check: filter=userName%20eq%20%22…%22&startIndex=1&count=100', () => {
  it('finds an existing user when Okta asks in a different case', async () => {
    const user = await createOktaUser(oktaUser('chris.moreau@corp.example', 'Chris', 'Moreau', '00uexist01'));
    const body = ok(await existenceCheck('Chris.Moreau@CORP.Example'), 200);
    expect(listSummary(body)).toEqual({
      schemas: [LIST],
      totalResults: 1,
      startIndex: 1,
      itemsPerPage: 1,
      ids: [user.id],
    });
    expect(body.Resources[0].userName).toBe('chris.moreau@corp.example');
  });

  it('answers 200 with an empty ListResponse for a user that does not exist', async () => {
    const body = ok(await existenceCheck('nobody.here@corp.example'), 200);
    expect(body).toEqual({ schemas: [LIST], totalResults: 0, startIndex: 1, itemsPerPage: 0, Resources: [] });
  });
});

describe('(c) create: POST /Users with the body Okta sends', () => {
  it('answers 201 with the full user, never the password', async () => {
    const sent = oktaUser('ana.silva@corp.example', 'Ana', 'Silva', '00u1ab2CD3ef4GH5ij6');
    const res = await write('POST', '/Users', sent, CLIENT_JSON_HEADERS);
    const body = ok(res, 201);
    const id = body.id;
    expect(id).toMatch(/\S/);
    expect(body).toEqual(expectedUser(sent, id));
    expect(res.headers.get('location')).toBe(userLocation(id));
    expect(res.headers.get('content-type')).toBe('application/scim+json');
    expect(res.text).not.toContain(sent.password);
    expect(body.meta.lastModified).toBe(body.meta.created);

    // What Okta reads back is the same user.
    const again = await read(`/Users/${id}`);
    expect(ok(again, 200)).toEqual(body);
    expect(again.text).not.toContain(sent.password);
  });

  it('answers 409 with a SCIM error when the userName exists in another case', async () => {
    await createOktaUser(oktaUser('ana.santos@corp.example', 'Ana', 'Santos', '00u1ab2CD3ef4GH5ij6'));
    const sent = oktaUser('Ana.Santos@Corp.Example', 'Ana', 'Santos', '00u1ab2CD3ef4GH5ij7');
    const res = await write('POST', '/Users', sent, CLIENT_JSON_HEADERS);
    expect(res.status, res.text).toBe(409);
    expect(res.headers.get('content-type')).toBe('application/scim+json');
    expect(res.body).toMatchObject({ schemas: [SCIM_ERROR], status: '409', scimType: 'uniqueness' });
    expect(res.body.detail).toMatch(/\S/);
    expect(ok(await existenceCheck('ana.santos@corp.example'), 200).totalResults).toBe(1);
  });
});

describe('(d) profile push: GET, then PUT /Users/{id} with the whole object', () => {
  it('answers 200 with the change and stores it', async () => {
    const sent = oktaUser('omar.haddad@corp.example', 'Omar', 'Haddad', '00u7put0001');
    const created = await createOktaUser(sent);
    const before = ok(await read(`/Users/${created.id}`), 200);

    // Okta sends back what it read, with its change, its groups and (with password sync) a password.
    const put = {
      ...before,
      name: { ...before.name, givenName: 'Omari' },
      groups: [],
      password: 'N3w-pass!',
    };
    const res = await write('PUT', `/Users/${created.id}`, put);
    const body = ok(res, 200);
    const expected = {
      ...before,
      name: { givenName: 'Omari', familyName: 'Haddad' },
      meta: { ...before.meta, lastModified: expect.any(String) },
    };
    expect(body).toEqual(expected);
    expect(res.text).not.toContain('N3w-pass!');
    expect(Date.parse(body.meta.lastModified)).toBeGreaterThanOrEqual(Date.parse(before.meta.lastModified));

    expect(ok(await read(`/Users/${created.id}`), 200)).toEqual(body);
  });
});

describe('(e) deactivate and reactivate: PATCH {"op":"replace","value":{"active":…}}', () => {
  it('deactivates: 200 or 204, then GET shows active false and the filter still finds the user', async () => {
    const sent = oktaUser('lena.vogel@corp.example', 'Lena', 'Vogel', '00u9deact01');
    const created = await createOktaUser(sent);

    const res = await write(
      'PATCH',
      `/Users/${created.id}`,
      patchOp({ op: 'replace', value: { active: false } }),
    );
    expect([200, 204], res.text).toContain(res.status);
    if (res.status === 200) expect(res.body.active).toBe(false);

    const after = ok(await read(`/Users/${created.id}`), 200);
    expect(after).toEqual({
      ...expectedUser(sent, created.id),
      active: false,
      meta: { ...created.meta, lastModified: expect.any(String) },
    });

    const found = ok(await existenceCheck('lena.vogel@corp.example'), 200);
    expect(listSummary(found)).toEqual({
      schemas: [LIST],
      totalResults: 1,
      startIndex: 1,
      itemsPerPage: 1,
      ids: [created.id],
    });
    expect(found.Resources[0].active).toBe(false);

    // Reactivation is the same request with true.
    const back = await write(
      'PATCH',
      `/Users/${created.id}`,
      patchOp({ op: 'replace', value: { active: true } }),
    );
    expect([200, 204], back.text).toContain(back.status);
    if (back.status === 200) expect(back.body.active).toBe(true);
    const reactivated = ok(await read(`/Users/${created.id}`), 200);
    expect(reactivated).toEqual({
      ...after,
      meta: { ...after.meta, lastModified: expect.any(String) },
      active: true,
    });
  });
});

describe('(f) Push Groups', () => {
  const { step, run } = sequence();
  let gid: string;
  let group: Json;
  const u: Record<'u3' | 'u5' | 'u9', string> = { u3: '', u5: '', u9: '' };

  const member = (id: string, display: string) => ({
    value: id,
    $ref: userLocation(id),
    display,
    type: 'User',
  });
  const byValue = (a: { value: string }, b: { value: string }) => (a.value < b.value ? -1 : 1);
  const members = async () => {
    const body = ok(await read(`/Groups/${gid}`), 200);
    return [...(body.members as Json[])].sort(byValue);
  };
  const patchGroup = async (...ops: unknown[]) => {
    const res = await write('PATCH', `/Groups/${gid}`, patchOp(...ops));
    expect([200, 204], res.text).toContain(res.status);
    return res;
  };

  step('POST /Groups {displayName, members: []} → 201 with the group', async () => {
    u.u3 = (await createOktaUser(oktaUser('kim@corp.example', 'Kim', 'Park', '00ugrp0003'))).id;
    u.u5 = (await createOktaUser(oktaUser('noor@corp.example', 'Noor', 'Aziz', '00ugrp0005'))).id;
    u.u9 = (await createOktaUser(oktaUser('lee@corp.example', 'Lee', 'Chen', '00ugrp0009'))).id;

    const res = await write('POST', '/Groups', { schemas: [GROUP], displayName: 'Eng', members: [] });
    group = ok(res, 201);
    gid = group.id;
    expect(gid).toMatch(/\S/);
    expect(group).toEqual({
      schemas: [GROUP],
      id: gid,
      displayName: 'Eng',
      members: [],
      meta: {
        resourceType: 'Group',
        created: expect.any(String),
        lastModified: expect.any(String),
        location: groupLocation(gid),
      },
    });
    expect(res.headers.get('location')).toBe(groupLocation(gid));
  });

  step('GET /Groups?startIndex=1&count=100 lists it', async () => {
    const body = ok(await read('/Groups?startIndex=1&count=100'), 200);
    expect(body).toEqual({
      schemas: [LIST],
      totalResults: 1,
      startIndex: 1,
      itemsPerPage: 1,
      Resources: [group],
    });
    expect(ok(await read(`/Groups/${gid}`), 200)).toEqual(group);
  });

  step('renames with the pathless replace that repeats the id', async () => {
    await patchGroup({ op: 'replace', value: { id: gid, displayName: 'Eng Team' } });
    const body = ok(await read(`/Groups/${gid}`), 200);
    expect(body.id).toBe(gid);
    expect(body.displayName).toBe('Eng Team');
    expect(body.members).toEqual([]);
  });

  step('pushes membership changes: remove members[value eq "u9"] and add u3 with its display', async () => {
    await patchGroup({
      op: 'add',
      path: 'members',
      value: [
        { value: u.u9, display: 'lee@corp.example' },
        { value: u.u5, display: 'noor@corp.example' },
      ],
    });
    expect(await members()).toEqual(
      [member(u.u9, 'lee@corp.example'), member(u.u5, 'noor@corp.example')].sort(byValue),
    );

    await patchGroup(
      { op: 'remove', path: `members[value eq "${u.u9}"]` },
      { op: 'add', path: 'members', value: [{ value: u.u3, display: 'kim@corp.example' }] },
    );
    expect(await members()).toEqual(
      [member(u.u5, 'noor@corp.example'), member(u.u3, 'kim@corp.example')].sort(byValue),
    );
  });

  step('pushes the whole member list with replace members', async () => {
    await patchGroup({
      op: 'replace',
      path: 'members',
      value: [
        { value: u.u9, display: 'lee@corp.example' },
        { value: u.u3, display: 'kim@corp.example' },
      ],
    });
    expect(await members()).toEqual(
      [member(u.u9, 'lee@corp.example'), member(u.u3, 'kim@corp.example')].sort(byValue),
    );
  });

  step('empties the group with the pathless {"members": []}', async () => {
    await patchGroup({ op: 'replace', value: { members: [] } });
    const body = ok(await read(`/Groups/${gid}`), 200);
    expect(body.members).toEqual([]);
    expect(body.displayName).toBe('Eng Team');
  });

  step('DELETE /Groups/{id} → 204, then 404; its users stay', async () => {
    const res = await live.scim('DELETE', `/Groups/${gid}`, { headers: CLIENT_HEADERS });
    expect(res.status, res.text).toBe(204);
    expect(res.text).toBe('');
    const gone = await read(`/Groups/${gid}`);
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({ schemas: [SCIM_ERROR], status: '404' });
    for (const id of Object.values(u)) expect((await read(`/Users/${id}`)).status).toBe(200);
  });

  it('creates, lists, renames, changes members of and deletes one group, step by step', run);
});

describe('(g) unassignment: Okta never deletes a user', () => {
  it('unassign is active false; the user stays retrievable and is reactivated, not recreated, on reassign', async () => {
    const sent = oktaUser('sam.ortiz@corp.example', 'Sam', 'Ortiz', '00uunassign1');
    const created = await createOktaUser(sent);

    const res = await write(
      'PATCH',
      `/Users/${created.id}`,
      patchOp({ op: 'replace', value: { active: false } }),
    );
    expect([200, 204], res.text).toContain(res.status);

    // Still there by id, by Okta's existence check, and among active-false users.
    expect(ok(await read(`/Users/${created.id}`), 200)).toEqual({
      ...expectedUser(sent, created.id),
      active: false,
    });
    const found = ok(await existenceCheck('sam.ortiz@corp.example'), 200);
    expect(listSummary(found)).toEqual({
      schemas: [LIST],
      totalResults: 1,
      startIndex: 1,
      itemsPerPage: 1,
      ids: [created.id],
    });
    expect(found.Resources[0].active).toBe(false);
    const inactive = ok(await read('/Users?filter=active%20eq%20false&startIndex=1&count=100'), 200);
    expect((inactive.Resources as Json[]).map((r) => r.id)).toContain(created.id);

    // Reassignment: the existence check found the user, so Okta reactivates it instead of creating it.
    await write('PATCH', `/Users/${created.id}`, patchOp({ op: 'replace', value: { active: true } }));
    const back = ok(await read(`/Users/${created.id}`), 200);
    expect(back.id).toBe(created.id);
    expect(back.active).toBe(true);
    expect(ok(await existenceCheck('SAM.ORTIZ@corp.example'), 200).totalResults).toBe(1);
  });
});
