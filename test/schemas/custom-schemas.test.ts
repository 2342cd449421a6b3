// An organization's own schema extensions: defined through the admin API, advertised in its
// /Schemas and /ResourceTypes, validated, stored, returned, patched, filtered and sorted in SQL, and
// never seen by another organization.
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { currentCursor, readAll } from '../helpers/changes.js';
import { type Harness, type Tenant, useHarness } from '../helpers/harness.js';
import { expectScimError, type Json, patchOp, USER } from '../helpers/scim.js';

const ACME = 'urn:ietf:params:scim:schemas:extension:acme:2.0:User';

const acmeSchema = {
  id: ACME,
  name: 'AcmeUser',
  description: 'What Acme keeps about its people',
  attributes: [
    { name: 'costCenter', type: 'string', description: 'Where the cost goes' },
    { name: 'region', type: 'string', canonicalValues: ['emea', 'amer', 'apac'], caseExact: true },
    { name: 'licenceTier', type: 'integer' },
    { name: 'isContractor', type: 'boolean' },
    { name: 'badges', type: 'string', multiValued: true },
    {
      name: 'office',
      type: 'complex',
      subAttributes: [
        { name: 'building', type: 'string' },
        { name: 'floor', type: 'integer' },
      ],
    },
  ],
};

let harness: Harness;
let acme: Tenant;
let other: Tenant;
useHarness(async (h) => {
  harness = h;
  acme = await harness.tenant();
  other = await harness.tenant();
  await harness.admin('put', `/orgs/${acme.orgId}/schemas/${ACME}`).send(acmeSchema).expect(201);
});

const putSchema = (orgId: string, urn: string, body: unknown) =>
  harness.admin('put', `/orgs/${orgId}/schemas/${urn}`).send(body as object);

const person = (userName: string, extension?: Record<string, unknown>) => ({
  schemas: extension ? [USER, ACME] : [USER],
  userName,
  ...(extension ? { [ACME]: extension } : {}),
});

describe('the admin API', () => {
  it('spells out every characteristic, lists and shows the schema, and replaces it with 200', async () => {
    const listed = await harness.admin('get', `/orgs/${acme.orgId}/schemas`).expect(200);
    expect(listed.body.schemas).toHaveLength(1);
    const schema = listed.body.schemas[0];
    expect(schema).toMatchObject({ id: ACME, name: 'AcmeUser', resourceType: 'User' });
    expect(schema.attributes[0]).toEqual({
      name: 'costCenter',
      type: 'string',
      multiValued: false,
      description: 'Where the cost goes',
      required: false,
      caseExact: false,
      mutability: 'readWrite',
      returned: 'default',
      uniqueness: 'none',
    });
    expect(schema.attributes[5].subAttributes[1]).toMatchObject({ name: 'floor', type: 'integer' });
    const shown = await harness.admin('get', `/orgs/${acme.orgId}/schemas/${ACME.toUpperCase()}`).expect(200);
    expect(shown.body.id).toBe(ACME);
    await putSchema(acme.orgId, ACME, acmeSchema).expect(200);
  });

  it('refuses a definition that is not valid, saying what is wrong', async () => {
    const refused = async (urn: string, body: unknown, message: RegExp) => {
      const res = await putSchema(other.orgId, urn, body).expect(400);
      expect(res.body.error.code).toBe('invalid_request');
      expect(res.body.error.message).toMatch(message);
    };
    const core = 'urn:ietf:params:scim:schemas:core:2.0:User';
    await refused(core, { ...acmeSchema, id: core }, /standard SCIM URN/);
    const enterprise = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
    await refused(enterprise, { ...acmeSchema, id: enterprise }, /standard SCIM URN/);
    await refused(`${ACME}x`, acmeSchema, /not the URN the path names/);
    await refused(
      'urn:acme:people',
      { ...acmeSchema, id: 'urn:acme:people' },
      /resourceType: say which resource/,
    );
    const attrs = (attributes: unknown[]) => ({ ...acmeSchema, attributes });
    await refused(ACME, attrs([{ name: 'photo', type: 'binary' }]), /attributes\.0\.type/);
    await refused(
      ACME,
      attrs([{ name: '9lives', type: 'string' }]),
      /attributes\.0\.name: must start with a letter/,
    );
    await refused(ACME, attrs([{ name: 'office', type: 'complex' }]), /lists its sub-attributes/);
    await refused(
      ACME,
      attrs([{ name: 'a', type: 'complex', subAttributes: [{ name: 'b', type: 'complex' }] }]),
      /one level only/,
    );
    await refused(
      ACME,
      attrs([
        { name: 'team', type: 'string' },
        { name: 'Team', type: 'string' },
      ]),
      /Team is named twice/,
    );
    await refused(ACME, attrs([{ name: 'n', type: 'integer', canonicalValues: ['1'] }]), /canonical values/);
    await refused(
      ACME,
      attrs([{ name: 'n', type: 'string', uniqueness: 'global' }]),
      /global is not offered/,
    );
    await refused(ACME, attrs([{ name: 'n', type: 'string', color: 'red' }]), /attributes\.0/);
    await refused(ACME, attrs([]), /at least one attribute/);
    await harness
      .admin('put', `/orgs/00000000-0000-4000-8000-000000000000/schemas/${ACME}`)
      .send(acmeSchema)
      .expect(404);
  });

  it('takes only RFC 8141 URNs that a filter can name, and filters on what it takes', async () => {
    const t = await harness.tenant();
    const schemaOf = (id: string) => ({
      id,
      resourceType: 'User',
      attributes: [{ name: 'code', type: 'string' }],
    });
    for (const urn of [
      'urn:acme:a"b',
      'urn:acme:a[b]',
      'urn:acme:a(b)',
      'urn:acme:a,b',
      'urn:acme:a%41',
      'urn:a:b',
      'urn:-acme:b',
    ]) {
      const res = await putSchema(t.orgId, encodeURIComponent(urn), schemaOf(urn));
      expect([urn, res.status]).toEqual([urn, 400]);
      expect(res.body.error.message).toMatch(/^id: must be a URN \(RFC 8141\) a filter can name/);
    }
    const odd = "urn:acme-corp:people:v1.0:ext'ra";
    await putSchema(t.orgId, encodeURIComponent(odd), schemaOf(odd)).expect(201);
    const created = await t
      .post('/Users', { schemas: [USER, odd], userName: 'urn@example.com', [odd]: { code: 'X1' } })
      .expect(201);
    const found = await t.get(`/Users?filter=${encodeURIComponent(`${odd}:code eq "X1"`)}`).expect(200);
    expect(found.body.Resources.map((u: { id: string }) => u.id)).toEqual([created.body.id]);
  });

  it('refuses a URN that would be ambiguous with another of the organization', async () => {
    const res = await putSchema(acme.orgId, `${ACME}:more`, {
      ...acmeSchema,
      id: `${ACME}:more`,
      resourceType: 'User',
    }).expect(400);
    expect(res.body.error.message).toMatch(/ambiguous/);
  });
});

describe('discovery', () => {
  it("lists the organization's schema with its characteristics, and names it in the resource type", async () => {
    const schemas = (await acme.get('/Schemas').expect(200)).body;
    expect(schemas.totalResults).toBe(4);
    const ours = schemas.Resources.find((s: { id: string }) => s.id === ACME);
    expect(ours.meta.location).toBe(`${acme.baseUrl}/Schemas/${ACME}`);
    expect(ours.attributes.map((a: { name: string }) => a.name)).toEqual([
      'costCenter',
      'region',
      'licenceTier',
      'isContractor',
      'badges',
      'office',
    ]);
    expect(ours.attributes[1]).toMatchObject({ caseExact: true, canonicalValues: ['emea', 'amer', 'apac'] });
    expect((await acme.get(`/Schemas/${ACME}`).expect(200)).body.id).toBe(ACME);
    const user = (await acme.get('/ResourceTypes/User').expect(200)).body;
    expect(user.schemaExtensions).toEqual([
      { schema: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User', required: false },
      { schema: ACME, required: false },
    ]);
  });

  it('shows another organization nothing of it', async () => {
    expect((await other.get('/Schemas').expect(200)).body.totalResults).toBe(3);
    await other.get(`/Schemas/${ACME}`).expect(404);
    expect((await other.get('/ResourceTypes/User').expect(200)).body.schemaExtensions).toHaveLength(1);
  });
});

describe('users carrying custom attributes', () => {
  it('are validated, stored and returned, with the URN in schemas', async () => {
    const extension = {
      costCenter: 'CC-100',
      region: 'emea',
      licenceTier: 2,
      isContractor: false,
      badges: ['red', 'blue'],
      office: { building: 'North', floor: 3 },
    };
    const created = await acme.post('/Users', person('carla@acme.example', extension)).expect(201);
    expect(created.body.schemas).toEqual([USER, ACME]);
    expect(created.body[ACME]).toEqual(extension);
    const read = await acme.get(`/Users/${created.body.id}`).expect(200);
    expect(read.body[ACME]).toEqual(extension);
    const bad = await acme.post('/Users', person('dora@acme.example', { licenceTier: 'gold' })).expect(400);
    expectScimError(bad, 400, 'invalidValue');
    expect(bad.body.detail).toMatch(/licenceTier/);
  });

  it('are replaced whole by PUT, as Okta pushes a profile: what the body leaves out is cleared', async () => {
    const created = await acme
      .post('/Users', person('ivan@acme.example', { costCenter: 'CC-7', region: 'amer' }))
      .expect(201);
    const replaced = await acme
      .put(`/Users/${created.body.id}`, person('ivan@acme.example', { costCenter: 'CC-8' }))
      .expect(200);
    expect(replaced.body[ACME]).toEqual({ costCenter: 'CC-8' });
    const cleared = await acme.put(`/Users/${created.body.id}`, person('ivan@acme.example')).expect(200);
    expect(cleared.body).not.toHaveProperty(ACME);
    expect(cleared.body.schemas).toEqual([USER]);
  });

  it('named bare, when the enterprise extension defines the name too, are ambiguous: the answer names both URNs', async () => {
    const enterprise = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
    const both = (detail: string) => {
      expect(detail).toMatch(/costCenter is ambiguous: more than one schema of User defines it/);
      expect(detail).toContain(`name it with its URN (${enterprise}:costCenter or ${ACME}:costCenter)`);
    };
    const filtered = await acme
      .get(`/Users?filter=${encodeURIComponent('costCenter eq "CC-1"')}`)
      .expect(400);
    expectScimError(filtered, 400, 'invalidFilter');
    both(filtered.body.detail);
    const sorted = await acme.get('/Users?sortBy=costCenter').expect(400);
    both(sorted.body.detail);
    const id = (await acme.post('/Users', person('amb@acme.example')).expect(201)).body.id;
    const patched = await acme
      .patch(`/Users/${id}`, patchOp({ op: 'replace', path: 'costCenter', value: 'CC-1' }))
      .expect(400);
    expectScimError(patched, 400, 'invalidPath');
    both(patched.body.detail);
    // With its URN, each is its own.
    await acme
      .patch(`/Users/${id}`, patchOp({ op: 'replace', path: `${ACME}:costCenter`, value: 'CC-1' }))
      .expect(200);
    await acme.get(`/Users?filter=${encodeURIComponent(`${ACME}:costCenter eq "CC-1"`)}`).expect(200);
  });

  it('take Entra’s flat PATCH paths, and are filtered and sorted in SQL', async () => {
    const ids: string[] = [];
    for (const [n, cost] of [
      [1, 'cc-300'],
      [2, 'CC-200'],
      [3, 'cc-250'],
    ] as const) {
      const res = await acme.post('/Users', person(`sorted${n}@acme.example`)).expect(201);
      ids.push(res.body.id);
      await acme
        .patch(`/Users/${res.body.id}`, patchOp({ op: 'replace', path: `${ACME}:costCenter`, value: cost }))
        .expect(200);
    }
    const found = await acme
      .get(`/Users?filter=${encodeURIComponent(`${ACME}:costCenter eq "CC-300"`)}`)
      .expect(200);
    expect(found.body.Resources.map((u: { id: string }) => u.id)).toEqual([ids[0]]);
    const sorted = await acme
      .get(
        `/Users?filter=${encodeURIComponent('userName sw "sorted"')}&sortBy=${encodeURIComponent(`${ACME}:costCenter`)}`,
      )
      .expect(200);
    expect(sorted.body.Resources.map((u: { id: string }) => u.id)).toEqual([ids[1], ids[2], ids[0]]);
    await acme
      .post('/Users', person('upstairs@acme.example', { office: { building: 'N', floor: 9 } }))
      .expect(201);
    const floor = await acme
      .get(`/Users?filter=${encodeURIComponent(`${ACME}:office.floor gt 8`)}`)
      .expect(200);
    expect(floor.body.Resources.map((u: { userName: string }) => u.userName)).toEqual([
      'upstairs@acme.example',
    ]);
  });

  it('take PATCH by the extension path, pathless, and Entra’s string booleans; the feed names what changed', async () => {
    const created = await acme
      .post('/Users', person('hana@acme.example', { costCenter: 'CC-1' }))
      .expect(201);
    const id = created.body.id;
    const patched = await acme
      .patch(
        `/Users/${id}`,
        patchOp(
          { op: 'replace', path: `${ACME}:isContractor`, value: 'True' },
          { op: 'replace', path: ACME, value: { region: 'apac' } },
          { op: 'replace', value: { [`${ACME}:licenceTier`]: 3 } },
        ),
      )
      .expect(200);
    expect(patched.body[ACME]).toEqual({
      costCenter: 'CC-1',
      isContractor: true,
      region: 'apac',
      licenceTier: 3,
    });
    const changes = await harness
      .admin('get', `/changes?orgId=${acme.orgId}&types=user.updated&limit=1000`)
      .expect(200);
    const last = changes.body.changes.filter((c: { data: { id: string } }) => c.data.id === id).at(-1);
    expect(last.changedAttributes).toEqual([`${ACME}:isContractor`, `${ACME}:licenceTier`, `${ACME}:region`]);
    expect(last.data.attributes[ACME]).toMatchObject({ region: 'apac' });
  });

  it('extend groups too', async () => {
    const urn = 'urn:ietf:params:scim:schemas:extension:acme:2.0:Group';
    await putSchema(acme.orgId, urn, { id: urn, attributes: [{ name: 'costCode', type: 'string' }] }).expect(
      201,
    );
    await harness.admin('patch', `/orgs/${acme.orgId}`).send({ groupSync: true }).expect(200);
    const group = await acme
      .post('/Groups', {
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group', urn],
        displayName: 'Ops',
        [urn]: { costCode: 'OPS-1' },
      })
      .expect(201);
    expect(group.body.schemas).toEqual(['urn:ietf:params:scim:schemas:core:2.0:Group', urn]);
    expect(group.body[urn]).toEqual({ costCode: 'OPS-1' });
    const found = await acme
      .get(`/Groups?filter=${encodeURIComponent(`${urn}:costCode eq "ops-1"`)}`)
      .expect(200);
    expect(found.body.totalResults).toBe(1);
  });

  it('are ignored in another organization, and its filters do not know them', async () => {
    const res = await other.post('/Users', person('erin@other.example', { costCenter: 'CC-1' })).expect(201);
    expect(res.body.schemas).toEqual([USER]);
    expect(res.body).not.toHaveProperty(ACME);
    const stored = await harness.database.db
      .selectFrom('users')
      .select('data')
      .where('id', '=', res.body.id)
      .executeTakeFirstOrThrow();
    expect(stored.data).not.toHaveProperty(ACME);
    const refused = await other
      .get(`/Users?filter=${encodeURIComponent(`${ACME}:costCenter eq "CC-1"`)}`)
      .expect(400);
    expectScimError(refused, 400, 'invalidFilter');
  });
});

describe('characteristics and limits', () => {
  it('honours returned and mutability, and bounds a custom string', async () => {
    const org = await harness.tenant();
    const urn = 'urn:ietf:params:scim:schemas:extension:traits:2.0:User';
    await putSchema(org.orgId, urn, {
      id: urn,
      attributes: [
        { name: 'note', type: 'string' },
        { name: 'secretCode', type: 'string', returned: 'never' },
        { name: 'level', type: 'integer', returned: 'request' },
        { name: 'source', type: 'string', mutability: 'readOnly' },
      ],
    }).expect(201);
    const created = await org
      .post('/Users', {
        schemas: [USER, urn],
        userName: 'kim@traits.example',
        [urn]: { note: 'hi', secretCode: 's3', level: 4, source: 'client' },
      })
      .expect(201);
    expect(created.body[urn]).toEqual({ note: 'hi' });
    const id = created.body.id;
    expect(
      (await org.get(`/Users/${id}?attributes=${encodeURIComponent(`${urn}:level`)}`).expect(200)).body[urn],
    ).toEqual({
      level: 4,
    });
    const tooLong = await org.post('/Users', {
      schemas: [USER, urn],
      userName: 'lee@traits.example',
      [urn]: { note: 'x'.repeat(2049) },
    });
    expectScimError(tooLong, 400, 'invalidValue');
    expect(tooLong.body.detail).toMatch(/note.*2048/);
  });

  it('withholds returned: never and writeOnly values from SCIM clients, and keeps them for the product', async () => {
    const org = await harness.tenant();
    const urn = 'urn:acme:badges:User';
    await putSchema(org.orgId, urn, {
      id: urn,
      resourceType: 'User',
      attributes: [
        { name: 'pin', type: 'string', mutability: 'writeOnly', returned: 'never' },
        { name: 'clearance', type: 'string', returned: 'never' },
      ],
    }).expect(201);
    const after = await currentCursor(harness);
    const created = await org
      .post('/Users', {
        schemas: [USER, urn],
        userName: 'pin@badges.example',
        [urn]: { pin: '4321', clearance: 'top' },
      })
      .expect(201);
    const id = created.body.id;
    // SCIM clients (the IdP) see neither, whatever they ask.
    for (const path of [
      `/Users/${id}`,
      `/Users/${id}?attributes=${encodeURIComponent(`${urn}:pin`)}`,
      '/Users',
    ]) {
      const text = (await org.get(path).expect(200)).text;
      expect(text).not.toContain('4321');
      expect(text).not.toContain('"top"');
    }
    // The product reads both: the read model and the change feed carry the stored values.
    const directory = harness.database.schema ? `${harness.database.schema}_directory` : 'directory';
    const { rows } = await sql<{ attributes: Json }>`
      select attributes from ${sql.id(directory, 'users')} where org_id = ${org.orgId} and id = ${id}`.execute(
      harness.database.db,
    );
    expect(rows[0]!.attributes[urn]).toEqual({ pin: '4321', clearance: 'top' });
    const { changes } = await readAll(harness, { after });
    const change = changes.find((c) => c.resourceId === id)!;
    expect(change.data.attributes[urn]).toEqual({ pin: '4321', clearance: 'top' });
  });

  it('requires a required attribute of a user carrying the extension', async () => {
    const org = await harness.tenant();
    const urn = 'urn:ietf:params:scim:schemas:extension:needs:2.0:User';
    await putSchema(org.orgId, urn, {
      id: urn,
      attributes: [
        { name: 'band', type: 'string', required: true },
        { name: 'note', type: 'string' },
      ],
    }).expect(201);
    const missing = await org.post('/Users', {
      schemas: [USER, urn],
      userName: 'max@needs.example',
      [urn]: { note: 'x' },
    });
    expectScimError(missing, 400, 'invalidValue');
    expect(missing.body.detail).toMatch(/band is required/);
    await org
      .post('/Users', { schemas: [USER, urn], userName: 'max@needs.example', [urn]: { band: 'B2' } })
      .expect(201);
    // The extension itself is optional (RFC 7643 §3.3): a user without it is valid.
    await org.post('/Users', { schemas: [USER], userName: 'ned@needs.example' }).expect(201);
  });

  it('allows 20 schemas to an organization and says so at the 21st', async () => {
    const org = await harness.tenant();
    for (let n = 1; n <= 20; n++) {
      const urn = `urn:example:ext${n}:User`;
      await putSchema(org.orgId, urn, { id: urn, attributes: [{ name: 'a', type: 'string' }] }).expect(201);
    }
    const res = await putSchema(org.orgId, 'urn:example:ext21:User', {
      id: 'urn:example:ext21:User',
      attributes: [{ name: 'a', type: 'string' }],
    }).expect(400);
    expect(res.body.error.message).toMatch(/at most 20 schemas/);
    expect((await org.get('/Schemas').expect(200)).body.totalResults).toBe(23);
  });
});

describe('changing a schema', () => {
  it('refuses a type change or a new required attribute that stored values break, with the count', async () => {
    await acme.post('/Users', person('jo@acme.example', { costCenter: 'CC-9' })).expect(201);
    const changed = {
      ...acmeSchema,
      attributes: acmeSchema.attributes.map((a) => (a.name === 'costCenter' ? { ...a, type: 'integer' } : a)),
    };
    const typeChange = await putSchema(acme.orgId, ACME, changed).expect(409);
    expect(typeChange.body.error.message).toMatch(/^costCenter: \d+ user\(s\) hold a value/);
    const required = {
      ...acmeSchema,
      attributes: [...acmeSchema.attributes, { name: 'employeeBand', type: 'string', required: true }],
    };
    const newRequired = await putSchema(acme.orgId, ACME, required).expect(409);
    expect(newRequired.body.error.message).toMatch(
      /^employeeBand: \d+ user\(s\) carrying .* have no value for it/,
    );
    // Adding an attribute is always allowed, and seen by the next request.
    const added = {
      ...acmeSchema,
      attributes: [...acmeSchema.attributes, { name: 'nickname', type: 'string' }],
    };
    await putSchema(acme.orgId, ACME, added).expect(200);
    const res = await acme.post('/Users', person('finn@acme.example', { nickname: 'Fi' })).expect(201);
    expect(res.body[ACME]).toEqual({ nickname: 'Fi' });
  });

  it('removes a schema: its values are kept unseen, and shown again when it comes back', async () => {
    const urn = 'urn:ietf:params:scim:schemas:extension:acme-temp:2.0:User';
    const temp = { id: urn, attributes: [{ name: 'shift', type: 'string' }] };
    await putSchema(acme.orgId, urn, temp).expect(201);
    const created = await acme
      .post('/Users', { schemas: [USER, urn], userName: 'gus@acme.example', [urn]: { shift: 'night' } })
      .expect(201);
    expect(created.body[urn]).toEqual({ shift: 'night' });
    await harness.admin('delete', `/orgs/${acme.orgId}/schemas/${urn}`).expect(204);
    const hidden = await acme.get(`/Users/${created.body.id}`).expect(200);
    expect(hidden.body).not.toHaveProperty(urn);
    expect(hidden.body.schemas).toEqual([USER]);
    const listed = await acme
      .get(`/Users?filter=${encodeURIComponent('userName eq "gus@acme.example"')}`)
      .expect(200);
    expect(listed.body.Resources[0]).not.toHaveProperty(urn);
    await harness.admin('delete', `/orgs/${acme.orgId}/schemas/${urn}`).expect(404);
    await putSchema(acme.orgId, urn, temp).expect(201);
    expect((await acme.get(`/Users/${created.body.id}`).expect(200)).body[urn]).toEqual({ shift: 'night' });
  });
});
