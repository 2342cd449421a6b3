// PATCH /Groups/{id} over HTTP on a real database: every form Entra and Okta send, member checks,
// the answer, and atomicity.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  createGroup,
  createUsers,
  getGroup,
  groupCalls,
  memberIds,
  sorted,
  unique,
} from '../helpers/groups.js';
import { type Harness, type Tenant, useHarness } from '../helpers/harness.js';
import { expectScimError, GROUP, type Json, PATCH_OP, patchOp, SCIM_JSON } from '../helpers/scim.js';

let harness: Harness;
/** Group sync on: the tenant most tests use. */
let t: Tenant;
const { groupTenant } = groupCalls(() => harness);
useHarness(async (h) => {
  harness = h;
  t = await groupTenant();
});

describe('PATCH /Groups/{id}', () => {
  interface Ctx {
    /** The group's id and displayName. */
    g: string;
    name: string;
    /** u0, u1, u2 are members; u3 and u4 are users of the organization that are not. */
    u: [string, string, string, string, string];
  }

  async function setup(): Promise<{ ctx: Ctx; group: Json }> {
    const u = await createUsers(t, 5);
    const name = unique('Patched');
    const group = await createGroup(t, {
      displayName: name,
      externalId: 'ext-before',
      members: [{ value: u[0] }, { value: u[1] }, { value: u[2] }],
    });
    return { ctx: { g: group.id, name, u }, group };
  }

  interface Form {
    name: string;
    ops: (c: Ctx) => unknown[];
    /** The member ids expected afterwards (default: unchanged). */
    members?: (c: Ctx) => string[];
    /** Other attributes expected afterwards. */
    attrs?: (c: Ctx) => Record<string, unknown>;
    check?: (c: Ctx, got: Json) => void;
  }

  const FORMS: Form[] = [
    {
      name: 'Entra unflagged Add members with several {$ref: null, value}',
      ops: ({ u }) => [
        {
          op: 'Add',
          path: 'members',
          value: [
            { $ref: null, value: u[3] },
            { $ref: null, value: u[4] },
          ],
        },
      ],
      members: ({ u }) => [...u],
    },
    {
      name: 'Entra Remove members with a value list (only the listed ones leave)',
      ops: ({ u }) => [
        {
          op: 'Remove',
          path: 'members',
          value: [
            { $ref: null, value: u[0] },
            { $ref: null, value: u[2] },
          ],
        },
      ],
      members: ({ u }) => [u[1]],
    },
    {
      name: 'flagged remove members[value eq "id"] (validator 23)',
      ops: ({ u }) => [{ op: 'remove', path: `members[value eq "${u[1]}"]` }],
      members: ({ u }) => [u[0], u[2]],
    },
    {
      name: 'remove members[value eq "id"] of a non-member (no-op)',
      ops: ({ u }) => [{ op: 'remove', path: `members[value eq "${u[4]}"]` }],
    },
    {
      name: 'replace members with a whole list (validator 22)',
      ops: ({ u }) => [{ op: 'replace', path: 'members', value: [{ value: u[2] }, { value: u[3] }] }],
      members: ({ u }) => [u[2], u[3]],
    },
    {
      name: 'add then remove the same member in one request (validator preview)',
      ops: ({ u }) => [
        { op: 'add', path: 'members', value: [{ value: u[3] }] },
        { op: 'remove', path: `members[value eq "${u[3]}"]` },
      ],
    },
    {
      name: 'Entra Replace displayName by path',
      ops: ({ name }) => [{ op: 'Replace', path: 'displayName', value: `${name} renamed` }],
      attrs: ({ name }) => ({ displayName: `${name} renamed` }),
    },
    {
      name: 'pathless replace {displayName} (validator 21)',
      ops: ({ name }) => [{ op: 'replace', value: { displayName: `${name} renamed` } }],
      attrs: ({ name }) => ({ displayName: `${name} renamed` }),
    },
    {
      name: 'pathless replace {externalId} (validator 20)',
      ops: () => [{ op: 'replace', value: { externalId: 'ext-after' } }],
      attrs: () => ({ externalId: 'ext-after' }),
    },
    {
      name: 'Entra Add externalId (single-valued add = replace)',
      ops: () => [{ op: 'Add', path: 'externalId', value: 'ext-after' }],
      attrs: () => ({ externalId: 'ext-after' }),
    },
    {
      name: "Okta rename carrying the group's own id in the value",
      ops: ({ g, name }) => [{ op: 'replace', value: { id: g, displayName: `${name} Team` } }],
      attrs: ({ name }) => ({ displayName: `${name} Team` }),
    },
    {
      name: 'Okta membership PATCH: remove one by filter, add one with a display',
      ops: ({ u }) => [
        { op: 'remove', path: `members[value eq "${u[1]}"]` },
        { op: 'add', path: 'members', value: [{ value: u[3], display: 'kim@corp.example' }] },
      ],
      members: ({ u }) => [u[0], u[2], u[3]],
      check: ({ u }, got) =>
        expect(got.members.find((m: { value: string }) => m.value === u[3])).toEqual({
          value: u[3],
          $ref: `${t.baseUrl}/Users/${u[3]}`,
          display: 'kim@corp.example',
          type: 'User',
        }),
    },
    {
      name: 'Okta pathless replace {members: []} (removes all)',
      ops: () => [{ op: 'replace', value: { members: [] } }],
      members: () => [],
    },
    {
      name: 'remove members with no value (removes all)',
      ops: () => [{ op: 'remove', path: 'members' }],
      members: () => [],
    },
    {
      name: 'add with a bare string value (Microsoft collection shape)',
      ops: ({ u }) => [{ op: 'add', path: 'members', value: u[3] }],
      members: ({ u }) => [u[0], u[1], u[2], u[3]],
    },
    {
      name: 'add of members already there (no duplicates)',
      ops: ({ u }) => [{ op: 'add', path: 'members', value: [{ value: u[0] }, { value: u[1] }] }],
    },
    {
      name: 'Entra Remove externalId',
      ops: () => [{ op: 'Remove', path: 'externalId' }],
      attrs: () => ({ externalId: undefined }),
    },
    {
      name: 'rename to a case variant of its own displayName',
      ops: ({ name }) => [{ op: 'replace', path: 'displayName', value: name.toUpperCase() }],
      attrs: ({ name }) => ({ displayName: name.toUpperCase() }),
    },
    {
      name: 'member ids in upper case (add, remove by value list, remove by filter)',
      ops: ({ u }) => [
        { op: 'add', path: 'members', value: [{ value: u[3].toUpperCase() }] },
        { op: 'Remove', path: 'members', value: [{ value: u[0].toUpperCase() }] },
        { op: 'remove', path: `members[value eq "${u[1].toUpperCase()}"]` },
      ],
      members: ({ u }) => [u[2], u[3]],
    },
    {
      name: 'an upper-case op name (ADD)',
      ops: ({ u }) => [{ op: 'ADD', path: 'members', value: [{ value: u[4] }] }],
      members: ({ u }) => [u[0], u[1], u[2], u[4]],
    },
  ];

  it.each(FORMS)('$name → 204, then GET shows it', async (form) => {
    const { ctx, group } = await setup();
    const res = await t.patch(`/Groups/${ctx.g}`, patchOp(...form.ops(ctx)));
    expect(res.status, res.text).toBe(204);
    expect(res.text).toBe('');
    const got = await getGroup(t, ctx.g);
    const expectedMembers = form.members ? form.members(ctx) : [ctx.u[0], ctx.u[1], ctx.u[2]];
    expect(got.members.map((m: { value: string }) => m.value).sort()).toEqual(sorted(expectedMembers));
    const expected: Record<string, unknown> = {
      id: ctx.g,
      displayName: ctx.name,
      externalId: 'ext-before',
      ...(form.attrs?.(ctx) ?? {}),
    };
    for (const [k, v] of Object.entries(expected)) {
      if (v === undefined) expect(got).not.toHaveProperty(k);
      else expect(got[k], k).toEqual(v);
    }
    expect(got.meta.created).toBe(group.meta.created);
    form.check?.(ctx, got);
  });

  // RFC 7644 §3.5.2.3 / §3.5.1: replace and PUT set the member set to exactly what is sent, so a
  // member's client-supplied display is the one sent now (Okta's full push re-sends display values).
  // FAILS today (debatable, reported): a member already present keeps its old display, because
  // groups.repository.ts replaceMembers → addMembers inserts with ON CONFLICT DO NOTHING.
  it('takes the display sent by a replace of members or a PUT for a member already there', async () => {
    const { ctx } = await setup();
    const displayOf = async (id: string) =>
      (await getGroup(t, ctx.g)).members.find((m: { value: string }) => m.value === id)?.display;
    await t
      .patch(
        `/Groups/${ctx.g}`,
        patchOp({ op: 'add', path: 'members', value: [{ value: ctx.u[3], display: 'Old' }] }),
      )
      .expect(204);
    expect(await displayOf(ctx.u[3])).toBe('Old');
    await t
      .patch(
        `/Groups/${ctx.g}`,
        patchOp({ op: 'replace', path: 'members', value: [{ value: ctx.u[3], display: 'New' }] }),
      )
      .expect(204);
    expect(await memberIds(t, ctx.g)).toEqual([ctx.u[3]]);
    expect(await displayOf(ctx.u[3])).toBe('New');
    await t
      .put(`/Groups/${ctx.g}`, { displayName: ctx.name, members: [{ value: ctx.u[3], display: 'Newer' }] })
      .expect(200);
    expect(await displayOf(ctx.u[3])).toBe('Newer');
  });

  it('accepts a lower-case "operations" key', async () => {
    const { ctx } = await setup();
    await t
      .patch(`/Groups/${ctx.g}`, { schemas: [PATCH_OP], operations: [{ op: 'remove', path: 'members' }] })
      .expect(204);
    expect(await memberIds(t, ctx.g)).toEqual([]);
  });

  it('keeps meta.lastModified when nothing changed, and moves it when something did', async () => {
    const { ctx, group } = await setup();
    await new Promise((r) => setTimeout(r, 5));
    const noOps: unknown[][] = [
      [{ op: 'add', path: 'members', value: [{ value: ctx.u[0] }] }],
      [{ op: 'remove', path: `members[value eq "${ctx.u[4]}"]` }],
      [{ op: 'replace', value: { displayName: ctx.name, externalId: 'ext-before' } }],
      [
        {
          op: 'replace',
          path: 'members',
          value: [{ value: ctx.u[0] }, { value: ctx.u[1] }, { value: ctx.u[2] }],
        },
      ],
    ];
    for (const ops of noOps) {
      await t.patch(`/Groups/${ctx.g}`, patchOp(...ops)).expect(204);
      const got = await getGroup(t, ctx.g);
      expect(got, JSON.stringify(ops)).toEqual(group);
    }
    await t
      .patch(`/Groups/${ctx.g}`, patchOp({ op: 'add', path: 'members', value: [{ value: ctx.u[3] }] }))
      .expect(204);
    const changed = await getGroup(t, ctx.g);
    expect(changed.meta.lastModified > group.meta.lastModified).toBe(true);
    expect(changed.members).toHaveLength(4);
    // Lists, filters and sorts read the same time.
    const since = encodeURIComponent(`meta.lastModified gt "${group.meta.lastModified}"`);
    const listed = await t
      .get(`/Groups?filter=${since}&sortBy=meta.lastModified&sortOrder=descending`)
      .expect(200);
    expect(listed.body.Resources[0]).toMatchObject({
      id: ctx.g,
      meta: { lastModified: changed.meta.lastModified },
    });
    await new Promise((r) => setTimeout(r, 5));
    await t
      .patch(`/Groups/${ctx.g}`, patchOp({ op: 'remove', path: `members[value eq "${ctx.u[3]}"]` }))
      .expect(204);
    const removed = await getGroup(t, ctx.g);
    expect(removed.meta.lastModified > changed.meta.lastModified).toBe(true);
  });

  describe('response', () => {
    it.each([
      { how: 'no preference', query: '', prefer: undefined, status: 204, members: undefined },
      { how: 'Prefer: return=minimal', query: '', prefer: 'return=minimal', status: 204, members: undefined },
      {
        how: 'Prefer: return=representation',
        query: '',
        prefer: 'return=representation',
        status: 200,
        members: true,
      },
      {
        how: 'excludedAttributes=members',
        query: '?excludedAttributes=members',
        prefer: undefined,
        status: 200,
        members: false,
      },
      {
        how: 'attributes=displayName',
        query: '?attributes=displayName',
        prefer: undefined,
        status: 200,
        members: false,
      },
      {
        how: 'attributes=members',
        query: '?attributes=members',
        prefer: undefined,
        status: 200,
        members: true,
      },
    ])('$how → $status', async ({ query, prefer, status, members }) => {
      const { ctx } = await setup();
      let req = t.patch(
        `/Groups/${ctx.g}${query}`,
        patchOp(
          { op: 'add', path: 'members', value: [{ value: ctx.u[3] }] },
          { op: 'replace', path: 'displayName', value: `${ctx.name} v2` },
        ),
      );
      if (prefer) req = req.set('Prefer', prefer);
      const res = await req;
      expect(res.status, res.text).toBe(status);
      if (status === 204) {
        expect(res.text).toBe('');
        return;
      }
      expect(res.headers['content-type']).toBe(SCIM_JSON);
      expect(res.body).toMatchObject({ schemas: [GROUP], id: ctx.g });
      if (query !== '?attributes=members') expect(res.body.displayName).toBe(`${ctx.name} v2`);
      if (members) {
        expect(res.body.members.map((m: { value: string }) => m.value).sort()).toEqual(
          sorted(ctx.u.slice(0, 4)),
        );
      } else {
        expect(res.body).not.toHaveProperty('members');
      }
      if (prefer) expect(res.body).toEqual(await getGroup(t, ctx.g));
    });
  });

  describe('is atomic', () => {
    const ATOMIC: [string, (c: Ctx) => unknown[], string][] = [
      [
        'an unknown id among valid adds in one op',
        ({ u }) => [
          {
            op: 'add',
            path: 'members',
            value: [{ value: u[3] }, { value: '00000000-0000-4000-8000-000000000000' }],
          },
        ],
        '00000000-0000-4000-8000-000000000000',
      ],
      [
        'a rename, a valid add, then an invalid add',
        ({ u, name }) => [
          { op: 'replace', path: 'displayName', value: `${name} never` },
          { op: 'add', path: 'members', value: [{ value: u[3] }] },
          { op: 'remove', path: `members[value eq "${u[0]}"]` },
          { op: 'add', path: 'members', value: [{ value: u[4] }, { value: 'not-a-uuid' }] },
        ],
        'not-a-uuid',
      ],
      [
        'a pathless rename and a replace of members containing a bad id',
        ({ u, name }) => [
          { op: 'replace', value: { displayName: `${name} never`, externalId: 'ext-never' } },
          {
            op: 'replace',
            path: 'members',
            value: [{ value: u[4] }, { value: 'deadbeef-dead-4eef-8eef-deadbeefdead' }],
          },
        ],
        'deadbeef-dead-4eef-8eef-deadbeefdead',
      ],
      [
        'removals before a bad bare-string add',
        ({ u }) => [
          { op: 'remove', path: 'members' },
          { op: 'add', path: 'members', value: [u[3], 'nobody'] },
        ],
        'nobody',
      ],
    ];

    it.each(ATOMIC)('%s → 400 invalidValue and nothing changed', async (_, ops, named) => {
      const { ctx, group } = await setup();
      const res = await t.patch(`/Groups/${ctx.g}`, patchOp(...ops(ctx)));
      expectScimError(res, 400, 'invalidValue');
      expect(res.body.detail).toContain(named);
      expect(await getGroup(t, ctx.g)).toEqual(group);
    });

    it('refuses a rename to a displayName another group has (any case) with 409, membership unchanged', async () => {
      const taken = await createGroup(t, { displayName: unique('Taken') });
      const { ctx, group } = await setup();
      const res = await t.patch(
        `/Groups/${ctx.g}`,
        patchOp(
          { op: 'add', path: 'members', value: [{ value: ctx.u[3] }] },
          { op: 'replace', path: 'displayName', value: taken.displayName.toLowerCase() },
        ),
      );
      expectScimError(res, 409, 'uniqueness');
      expect(await getGroup(t, ctx.g)).toEqual(group);
    });

    it('refuses to change the id in an Okta-style rename (400 mutability)', async () => {
      const { ctx, group } = await setup();
      const res = await t.patch(
        `/Groups/${ctx.g}`,
        patchOp({ op: 'replace', value: { id: randomUUID(), displayName: `${ctx.name} moved` } }),
      );
      expectScimError(res, 400, 'mutability');
      expect(await getGroup(t, ctx.g)).toEqual(group);
    });
  });

  it('answers 404 for an unknown group', async () => {
    const [u] = await createUsers(t, 1);
    expectScimError(
      await t.patch(
        `/Groups/${randomUUID()}`,
        patchOp({ op: 'add', path: 'members', value: [{ value: u }] }),
      ),
      404,
    );
    expectScimError(await t.patch('/Groups/not-a-uuid', patchOp({ op: 'remove', path: 'members' })), 404);
  });
});
