// How many users and groups an organization has, kept by the statements that create and remove
// them (a step of each), so that an unfiltered list's totalResults costs a few rows, not a count
// of the organization. The count is spread over shards (db/shards.ts), so concurrent creates in one
// organization do not queue behind one row.
import { type Kysely, type QueryCreator, sql } from 'kysely';
import { connectionShard } from '../db/shards.js';
import { statement, unestimatedParam } from '../db/statement.js';
import type { DB } from '../db/tables.js';

export type Counted = 'users' | 'groups';

/**
 * A CTE step counting the rows of the step named `written` (rows with an `org_id`) into their
 * organization's count of `kind`, by `delta` each: one shard row per organization, however many rows
 * the statement wrote (ON CONFLICT may update a row once a statement).
 */
export function countRows(kind: Counted, delta: 1 | -1) {
  const count = sql.ref(`org_counts.${kind}`);
  const version = sql.ref(`org_counts.${kind}_version`);
  // biome-ignore lint/suspicious/noExplicitAny: the creator of any statement with a `written` step.
  return (w: QueryCreator<any>) =>
    w
      .insertInto('org_counts')
      .columns(['org_id', 'shard', kind, `${kind}_version`])
      .expression(
        w
          .selectFrom('written')
          .select([
            'org_id',
            connectionShard().as('shard'),
            sql<number>`count(*) * ${sql.lit(delta)}`.as(kind),
            sql.lit(1).as('version'),
          ])
          .groupBy('org_id'),
      )
      .onConflict((conflict) =>
        conflict.columns(['org_id', 'shard']).doUpdateSet({
          [kind]: sql`${count} + excluded.${sql.ref(kind)}`,
          [`${kind}_version`]: sql`${version} + 1`,
        }),
      );
}

const countOf = (kind: Counted) =>
  statement((db) =>
    db
      .selectFrom('org_counts')
      .where('org_id', '=', unestimatedParam('org', 'uuid'))
      .select([
        sql<string>`coalesce(sum(${sql.ref(kind)}), 0)`.as('total'),
        sql<string>`coalesce(sum(${sql.ref(`${kind}_version`)}), 0)`.as('version'),
      ]),
  );

/** The organization's (`org`) users or groups in all, and a version that grows with each create and removal. */
export const COUNT_OF = { users: countOf('users'), groups: countOf('groups') } as const;

/**
 * Counts the organization's users and groups again, from their tables: for rows written without
 * scimd's statements (a bulk load straight into the database). Versions keep growing.
 */
export async function recountOrg(db: Kysely<DB>, orgId: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ users: string; groups: string }>`
      delete from org_counts where org_id = ${orgId} returning users_version as users, groups_version as groups
    `.execute(trx);
    const next = (kind: 'users' | 'groups') => rows.reduce((sum, row) => sum + Number(row[kind]), 0) + 1;
    await sql`
      insert into org_counts (org_id, shard, users, groups, users_version, groups_version)
      select ${orgId}, 0,
        (select count(*) from users where org_id = ${orgId} and deprovisioned_at is null),
        (select count(*) from groups where org_id = ${orgId}),
        ${next('users')}, ${next('groups')}
    `.execute(trx);
  });
}

/** The organization's users by state, and its groups. */
export async function countPeople(db: Kysely<DB>, orgId: string) {
  const { rows } = await sql<{ active: string; inactive: string; deprovisioned: string; groups: string }>`
    select
      count(*) filter (where deprovisioned_at is null and active) as active,
      count(*) filter (where deprovisioned_at is null and not active) as inactive,
      count(*) filter (where deprovisioned_at is not null) as deprovisioned,
      (select count(*) from groups where org_id = ${orgId}) as groups
    from users where org_id = ${orgId}`.execute(db);
  const row = rows[0]!;
  return {
    users: {
      active: Number(row.active),
      inactive: Number(row.inactive),
      deprovisioned: Number(row.deprovisioned),
    },
    groups: Number(row.groups),
  };
}
