// A member added to a mapped group is granted the group's roles by statements a connection plans once
// and keeps. Those plans must not depend on how large user_roles was when they were made: a mapping
// can fill it with a group's members while connections keep the plans they made on the empty table.
// On Postgres, auto_explain shows the plans of the grant's statements to the test's own session.
import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { onPostgres } from '../helpers/database.js';
import { createGroup, insertUsers } from '../helpers/groups.js';
import { type Harness, useHarness } from '../helpers/harness.js';

const USERS = 3000;
let harness: Harness;
let orgId: string;
let groupId: string;
let userIds: string[];

useHarness(async (h) => {
  harness = h;
  const org = await h.createOrg({ name: 'Grant plans', groupSync: true });
  orgId = org.id;
  const t = await h.tenantOf(org.id, await h.createToken(org.id));
  await h
    .admin('put', `/orgs/${org.id}/roles`)
    .send({ roles: [{ value: 'staff' }] })
    .expect(200);
  userIds = await insertUsers(h.database.db, org.id, 'planned', USERS);
  groupId = (await createGroup(t, { displayName: 'Planned' })).id;
  await h
    .admin('put', `/orgs/${org.id}/role-mappings`)
    .send({ mappings: [{ group: { id: groupId }, role: 'staff' }] })
    .expect(200);
});

describe('the grant of a mapped group', () => {
  it.skipIf(!onPostgres)('reaches user_roles by key in plans made while it was empty', async () => {
    const db = harness.database.db;
    await sql`analyze user_roles`.execute(db);
    const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    const plans: string[] = [];
    client.on('notice', (notice) => plans.push(notice.message ?? ''));
    await client.connect();
    try {
      await client.query(`set search_path = ${harness.database.schema}`);
      await client.query("load 'auto_explain'");
      await client.query('set auto_explain.log_min_duration = 0');
      await client.query('set auto_explain.log_nested_statements = on');
      await client.query('set client_min_messages = log');
      const add = (userId: string) =>
        client.query(
          'insert into group_members (org_id, group_id, user_id, created_at) values ($1, $2, $3, now())',
          [orgId, groupId, userId],
        );

      await add(userIds[0]!);
      // The grant's statements are planned now, for an empty user_roles; then the table fills.
      await sql`insert into user_roles (org_id, user_id, role, sources)
        select ${orgId}::uuid, id, 'staff', array['idp'] from unnest(${userIds.slice(2)}::uuid[]) as id`.execute(
        db,
      );
      plans.length = 0;
      await add(userIds[1]!);

      const granting = plans.filter((p) => p.includes('user_roles'));
      expect(granting.length).toBeGreaterThanOrEqual(3);
      expect(granting.filter((p) => /Seq Scan on user_roles/.test(p))).toEqual([]);
      const { rows } = await sql<{ role: string }>`
        select role from user_roles where org_id = ${orgId} and user_id = ${userIds[1]!}`.execute(db);
      expect(rows).toEqual([{ role: 'staff' }]);
    } finally {
      await client.end();
    }
  });
});
