// The read model: views in their own schema with typed columns (a contract: this test fails when a
// column changes), the same rows the changes carry, served by the tables' indexes, and readable by a
// role that can read nothing else.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { changesOf } from '../helpers/changes.js';
import { onPostgres } from '../helpers/database.js';
import { type Harness, type Tenant, useHarness } from '../helpers/harness.js';
import { ENTERPRISE, GROUP, USER } from '../helpers/scim.js';

let harness: Harness;
let t: Tenant;
let directory: string;
useHarness(async (h) => {
  harness = h;
  const org = await h.createOrg({ name: 'Read model', groupSync: true });
  t = await h.tenantOf(org.id, await h.createToken(org.id));
  directory = h.database.schema ? `${h.database.schema}_directory` : 'directory';
});

const CONTRACT = {
  users: [
    ['org_id', 'uuid'],
    ['id', 'uuid'],
    ['external_id', 'text'],
    ['user_name', 'text'],
    ['active', 'boolean'],
    ['deprovisioned', 'boolean'],
    ['deprovisioned_at', 'timestamp with time zone'],
    ['display_name', 'text'],
    ['given_name', 'text'],
    ['family_name', 'text'],
    ['primary_email', 'text'],
    ['emails', 'ARRAY'],
    ['title', 'text'],
    ['department', 'text'],
    ['manager_id', 'text'],
    ['employee_number', 'text'],
    ['attributes', 'jsonb'],
    ['created_at', 'timestamp with time zone'],
    ['updated_at', 'timestamp with time zone'],
  ],
  groups: [
    ['org_id', 'uuid'],
    ['id', 'uuid'],
    ['external_id', 'text'],
    ['display_name', 'text'],
    ['attributes', 'jsonb'],
    ['created_at', 'timestamp with time zone'],
    ['updated_at', 'timestamp with time zone'],
  ],
  group_members: [
    ['org_id', 'uuid'],
    ['group_id', 'uuid'],
    ['user_id', 'uuid'],
    ['added_at', 'timestamp with time zone'],
  ],
  // Roles and entitlements (added beside version 1; their organization column is organization_id).
  roles: [
    ['organization_id', 'uuid'],
    ['id', 'uuid'],
    ['value', 'text'],
    ['display_name', 'text'],
    ['description', 'text'],
    ['priority', 'integer'],
    ['scope', 'text'],
  ],
  entitlements: [
    ['organization_id', 'uuid'],
    ['id', 'uuid'],
    ['value', 'text'],
    ['display_name', 'text'],
    ['description', 'text'],
    ['scope', 'text'],
  ],
  user_roles: [
    ['organization_id', 'uuid'],
    ['user_id', 'uuid'],
    ['role', 'text'],
    ['sources', 'ARRAY'],
  ],
  user_entitlements: [
    ['organization_id', 'uuid'],
    ['user_id', 'uuid'],
    ['entitlement', 'text'],
    ['sources', 'ARRAY'],
  ],
};

describe('the read model', () => {
  let userId: string;
  let groupId: string;
  beforeAll(async () => {
    userId = (
      await t
        .post('/Users', {
          schemas: [USER, ENTERPRISE],
          userName: 'ada@corp.example',
          externalId: 'ext-ada',
          name: { givenName: 'Ada', familyName: 'Lovelace' },
          emails: [{ value: 'ada@corp.example', type: 'work' }],
          active: true,
          [ENTERPRISE]: { department: 'Maths' },
        })
        .expect(201)
    ).body.id;
    groupId = (
      await t
        .post('/Groups', { schemas: [GROUP], displayName: 'Analysts', members: [{ value: userId }] })
        .expect(201)
    ).body.id;
  });

  it('has exactly the columns of version 1, typed', async () => {
    const { rows } = await sql<{ table_name: string; column_name: string; data_type: string }>`
      select table_name, column_name, data_type from information_schema.columns
      where table_schema = ${directory} order by table_name, ordinal_position`.execute(harness.database.db);
    const actual: Record<string, string[][]> = {};
    for (const r of rows) {
      actual[r.table_name] ??= [];
      actual[r.table_name]!.push([r.column_name, r.data_type]);
    }
    expect(actual).toEqual(CONTRACT);
  });

  it('shows each user, group and membership as the changes carry them', async () => {
    const db = harness.database.db;
    const users = await sql<Record<string, unknown>>`
      select * from ${sql.id(directory, 'users')} where org_id = ${t.orgId}`.execute(db);
    expect(users.rows).toHaveLength(1);
    expect(users.rows[0]).toMatchObject({
      id: userId,
      user_name: 'ada@corp.example',
      external_id: 'ext-ada',
      given_name: 'Ada',
      family_name: 'Lovelace',
      primary_email: 'ada@corp.example',
      emails: ['ada@corp.example'],
      department: 'Maths',
      title: null,
      deprovisioned: false,
    });
    const [created] = await changesOf(harness, t.orgId);
    const times = (row: Record<string, unknown>) => ({
      ...row,
      created_at: new Date(row.created_at as string).toISOString(),
      updated_at: new Date(row.updated_at as string).toISOString(),
    });
    expect(times(created.data)).toEqual(times(JSON.parse(JSON.stringify(users.rows[0]))));
    const members =
      await sql`select group_id, user_id from ${sql.id(directory, 'group_members')} where org_id = ${t.orgId}`.execute(
        db,
      );
    expect(members.rows).toEqual([{ group_id: groupId, user_id: userId }]);
    const groups = await sql<{
      display_name: string;
    }>`select display_name from ${sql.id(directory, 'groups')} where org_id = ${t.orgId}`.execute(db);
    expect(groups.rows).toEqual([{ display_name: 'Analysts' }]);
  });

  it('finds one user through the primary key: the view adds no scan of its own', async () => {
    // With a handful of rows a scan is cheapest; without that choice, the plan shows what indexes
    // the view lets Postgres use.
    const rows = await harness.database.db.transaction().execute(async (trx) => {
      await sql`set local enable_seqscan = off`.execute(trx);
      const plan = await sql<{ 'QUERY PLAN': string }>`
        explain select * from ${sql.id(directory, 'users')} where org_id = ${t.orgId} and id = ${userId}`.execute(
        trx,
      );
      return plan.rows;
    });
    const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
    expect(plan).toMatch(/Index Scan using users_\w+ on users u[\s\S]*Index Cond: \(\(org_id = /);
    expect(plan).not.toMatch(/Seq Scan on users/);
  });

  it.skipIf(!onPostgres)('can be read by a role that can read nothing else', async () => {
    const role = `scimd_reader_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
    try {
      await admin.query(`create role ${role}`);
      await admin.query(`grant usage on schema ${directory} to ${role}`);
      await admin.query(`grant select on all tables in schema ${directory} to ${role}`);
      await admin.query('begin');
      await admin.query(`set local role ${role}`);
      const users = await admin.query(`select user_name from ${directory}.users where org_id = $1`, [
        t.orgId,
      ]);
      expect(users.rows).toEqual([{ user_name: 'ada@corp.example' }]);
      await expect(admin.query(`select * from ${harness.database.schema}.users`)).rejects.toThrow(
        /permission denied/,
      );
      await admin.query('rollback');
    } finally {
      await admin.query('rollback').catch(() => {});
      await admin.query(`drop owned by ${role}`);
      await admin.query(`drop role ${role}`);
      await admin.end();
    }
  });
});
