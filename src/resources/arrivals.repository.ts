// The users and groups an organization received last, newest first, and how many it has: what the
// setup page shows an IT admin once their IdP connects. A few rows read backwards along the
// (org_id, created_at, id) indexes and the kept counts (counts.repository.ts), whatever the
// organization's size.
import type { Kysely } from 'kysely';
import { param, statement } from '../db/statement.js';
import type { DB } from '../db/tables.js';
import { COUNT_OF } from './counts.repository.js';

interface ArrivedUser {
  readonly userName: string;
  readonly displayName: string | null;
  readonly active: boolean;
  readonly at: Date;
}

interface ArrivedGroup {
  readonly displayName: string;
  readonly at: Date;
}

export interface Arrivals {
  /** The organization's users (not deprovisioned) and groups, in all. */
  readonly totals: { readonly users: number; readonly groups: number };
  /** The newest first. */
  readonly users: readonly ArrivedUser[];
  readonly groups: readonly ArrivedGroup[];
}

const newestUsers = statement((db) =>
  db
    .selectFrom('users')
    .select(['user_name', 'display_name', 'active', 'created_at'])
    .where('org_id', '=', param('org'))
    .where('deprovisioned_at', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(param<number>('limit')),
);

const newestGroups = statement((db) =>
  db
    .selectFrom('groups')
    .select(['display_name', 'created_at'])
    .where('org_id', '=', param('org'))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(param<number>('limit')),
);

/** The organization's `limit` newest users and groups (no groups when `groups` is false), and its totals. */
export async function latestArrivals(
  db: Kysely<DB>,
  orgId: string,
  options: { readonly limit: number; readonly groups: boolean },
): Promise<Arrivals> {
  const values = { org: orgId, limit: options.limit };
  const [users, groups, userCount, groupCount] = await Promise.all([
    newestUsers.run(db, values),
    options.groups ? newestGroups.run(db, values).then((result) => result.rows) : [],
    COUNT_OF.users.run(db, values),
    COUNT_OF.groups.run(db, values),
  ]);
  return {
    totals: { users: Number(userCount.rows[0]?.total ?? 0), groups: Number(groupCount.rows[0]?.total ?? 0) },
    users: users.rows.map((row) => ({
      userName: row.user_name,
      displayName: row.display_name,
      active: row.active,
      at: row.created_at,
    })),
    groups: groups.map((row) => ({ displayName: row.display_name, at: row.created_at })),
  };
}
