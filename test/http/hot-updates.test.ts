// An update of a user that leaves its indexed values as they were writes no index entry: Postgres
// writes it heap-only (HOT), because no index reads `data` itself (migration 2026-12-03).
import { type Kysely, sql } from 'kysely';
import { expect, it } from 'vitest';
import type { DB } from '../../src/db/tables.js';
import { ResourceWrites } from '../../src/resources/resource-writes.js';
import { type Harness, useHarness } from '../helpers/harness.js';
import { USER } from '../helpers/scim.js';

const writes = new ResourceWrites();

let harness: Harness;
useHarness((h) => {
  harness = h;
});

/** The updates of users this transaction made, and how many of them were heap-only. */
async function updatesOf(trx: Kysely<DB>): Promise<{ updated: number; hot: number }> {
  const { rows } = await sql<{ updated: string; hot: string }>`
    select pg_stat_get_xact_tuples_updated('users'::regclass) as updated,
      pg_stat_get_xact_tuples_hot_updated('users'::regclass) as hot`.execute(trx);
  return { updated: Number(rows[0]!.updated), hot: Number(rows[0]!.hot) };
}

it('writes a new title, a deactivation or a whole profile as it was heap-only, and a new email not', async () => {
  const t = await harness.tenant();
  const profile = {
    schemas: [USER],
    userName: 'hot@corp.example',
    externalId: 'hot-1',
    name: { givenName: 'Ana', familyName: 'Ruiz' },
    emails: [{ type: 'work', value: 'hot@corp.example', primary: true }],
    title: 'Engineer',
  };
  const id: string = (await t.post('/Users', profile).expect(201)).body.id;
  const audit = (action: string) => ({
    orgId: t.orgId,
    actor: 'test',
    action,
    resourceType: 'User',
    resourceId: id,
    status: 200,
    requestId: `hot-${action}`,
  });
  await harness.database.db.transaction().execute(async (trx) => {
    const { schemas: _, ...attributes } = profile;
    await writes.users.replace(
      trx,
      t.orgId,
      id,
      { ...attributes, title: 'Manager', active: true },
      new Date(),
      audit('user.replace'),
    );
    await writes.users.merge(trx, t.orgId, id, { active: false }, new Date(), audit('user.patch'));
    expect(await updatesOf(trx)).toEqual({ updated: 2, hot: 2 });
    const moved = { ...attributes, emails: [{ type: 'work', value: 'moved@corp.example' }], active: true };
    await writes.users.replace(trx, t.orgId, id, moved, new Date(), audit('user.replace'));
    expect(await updatesOf(trx)).toEqual({ updated: 3, hot: 2 });
  });
  const read = (await t.get(`/Users/${id}`).expect(200)).body;
  expect(read.emails).toEqual([{ type: 'work', value: 'moved@corp.example' }]);
  const found = await t
    .get(`/Users?filter=${encodeURIComponent('emails eq "MOVED@corp.example"')}`)
    .expect(200);
  expect(found.body.Resources.map((u: { id: string }) => u.id)).toEqual([id]);
});
