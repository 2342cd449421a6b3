// A PATCH that does not depend on the stored user is merged into its row by one statement: the
// columns filters read follow it, and a PATCH that changes nothing still leaves its audit entry.
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { listAudit } from '../../src/audit/audit.repository.js';
import { type Harness, type Tenant, useHarness } from '../helpers/harness.js';
import { patchBody, uniqueName } from '../helpers/patch-users.js';
import { USER } from '../helpers/scim.js';

let harness: Harness;
let t: Tenant;
useHarness(async (h) => {
  harness = h;
  t = await h.tenant();
});

const idsMatching = async (filter: string) =>
  ((await t.get(`/Users?filter=${encodeURIComponent(filter)}`).expect(200)).body.Resources ?? []).map(
    (r: { id: string }) => r.id,
  );

it('keeps userName, externalId, displayName and active, which filters read, in step with the patch', async () => {
  const before = uniqueName('merge');
  const after = uniqueName('merged');
  const { id } = (
    await t
      .post('/Users', { schemas: [USER], userName: before, externalId: 'ext-m', displayName: 'Old' })
      .expect(201)
  ).body;
  await t
    .patch(
      `/Users/${id}`,
      patchBody([
        { op: 'replace', value: { userName: after, displayName: 'New', active: 'False' } },
        { op: 'remove', path: 'externalId' },
      ]),
    )
    .expect(200);
  expect(await idsMatching(`userName eq "${after}"`)).toEqual([id]);
  expect(await idsMatching(`userName eq "${before}"`)).toEqual([]);
  expect(await idsMatching(`displayName eq "New" and active eq false`)).toEqual([id]);
  expect(await idsMatching('externalId eq "ext-m"')).toEqual([]);
  await t.patch(`/Users/${id}`, patchBody([{ op: 'replace', path: 'active', value: true }])).expect(200);
  expect(await idsMatching(`userName eq "${after}" and active eq true`)).toEqual([id]);
});

it('writes nothing but the audit entry when the patch changes nothing', async () => {
  const created = (
    await t.post('/Users', { schemas: [USER], userName: uniqueName('same'), title: 'T' }).expect(201)
  ).body;
  const res = await t
    .patch(`/Users/${created.id}`, patchBody([{ op: 'replace', path: 'title', value: 'T' }]))
    .set('X-Request-Id', 'merge-unchanged')
    .expect(200);
  expect(res.body.meta.lastModified).toBe(created.meta.lastModified);
  expect(res.body.title).toBe('T');
  const { events } = await listAudit(harness.database.db, t.orgId, { limit: 1000 });
  expect(events.filter((e) => e.requestId === 'merge-unchanged')).toMatchObject([
    { action: 'user.patch', resourceId: created.id, status: 200 },
  ]);
});

it('answers 404 for a deprovisioned user, writing nothing', async () => {
  const { id } = (await t.post('/Users', { schemas: [USER], userName: uniqueName('gone') }).expect(201)).body;
  await t.delete(`/Users/${id}`).expect(204);
  await t.patch(`/Users/${id}`, patchBody([{ op: 'replace', path: 'title', value: 'Back' }])).expect(404);
});

it('merges in the database as RFC 7396 says, dropping objects left empty', async () => {
  const cases: [unknown, unknown, unknown][] = [
    [{ a: 1, b: { c: 2 } }, { a: false }, { a: false, b: { c: 2 } }],
    [{ a: 1, b: { c: 2 } }, { b: { d: 'x' } }, { a: 1, b: { c: 2, d: 'x' } }],
    [{ a: 1, b: { c: 2 } }, { a: null, b: { c: null } }, {}],
    [{ a: [1, 2] }, { a: [3], e: 'y' }, { a: [3], e: 'y' }],
    [{ a: 'text' }, { a: { b: 1 } }, { a: { b: 1 } }],
    [{ a: 1 }, {}, { a: 1 }],
  ];
  for (const [target, patch, expected] of cases) {
    const { rows } = await sql<{ merged: unknown }>`
      select scim_merge_patch(${JSON.stringify(target)}::jsonb, ${JSON.stringify(patch)}::jsonb) as merged`.execute(
      harness.database.db,
    );
    expect(rows[0]!.merged).toEqual(expected);
  }
});
