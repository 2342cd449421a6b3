// SQL of what a person mapping groups to roles chooses from: the organization's groups by name (a
// bounded page, optionally those whose name contains a text), the names of mapped groups, and a user
// found by id or userName for a look at its effective roles. Rows never leave this module.
import { type Kysely, sql } from 'kysely';
import { isUuid } from '../db/ids.js';
import { param, statement } from '../db/statement.js';
import type { DB } from '../db/tables.js';

export interface GroupChoice {
  readonly id: string;
  readonly displayName: string;
}

export interface FoundUser {
  readonly id: string;
  readonly userName: string;
  readonly displayName: string | null;
  readonly active: boolean;
}

/** Along the (org_id, lower(display_name)) index; `pattern` null takes every group. */
const groupsByName = statement((db) =>
  db
    .selectFrom('groups')
    .select(['id', 'display_name'])
    .where('org_id', '=', param('org'))
    .where(
      sql<boolean>`(${param('pattern')}::text is null or lower(display_name) like ${param('pattern')}::text)`,
    )
    .orderBy(sql`lower(display_name)`)
    .orderBy('id')
    .limit(param<number>('limit')),
);

const namesOfGroups = statement((db) =>
  db
    .selectFrom('groups')
    .select(['id', 'display_name'])
    .where('org_id', '=', param('org'))
    .where(sql<boolean>`id = any(${param('ids')}::uuid[])`),
);

const userColumns = ['id', 'user_name', 'display_name', 'active'] as const;
const userById = statement((db) =>
  db
    .selectFrom('users')
    .select(userColumns)
    .where('org_id', '=', param('org'))
    .where('id', '=', param('id'))
    .where('deprovisioned_at', 'is', null),
);
const userByName = statement((db) =>
  db
    .selectFrom('users')
    .select(userColumns)
    .where('org_id', '=', param('org'))
    .where(sql<boolean>`lower(user_name) = lower(${param('userName')}::text)`)
    .where('deprovisioned_at', 'is', null),
);

/** `like`'s wildcards and escape taken literally. */
const literally = (text: string) => text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * The first `limit` groups by name (in any case), those whose name contains `search` when given, and
 * whether there are more.
 */
export async function groupChoices(
  db: Kysely<DB>,
  orgId: string,
  options: { readonly search: string; readonly limit: number },
): Promise<{ groups: GroupChoice[]; more: boolean }> {
  const pattern = options.search === '' ? null : `%${literally(options.search)}%`;
  const { rows } = await groupsByName.run(db, { org: orgId, pattern, limit: options.limit + 1 });
  return {
    groups: rows.slice(0, options.limit).map((r) => ({ id: r.id, displayName: r.display_name })),
    more: rows.length > options.limit,
  };
}

/** The names of these groups of the organization, by id; an id of no group is left out. */
export async function groupNames(
  db: Kysely<DB>,
  orgId: string,
  ids: readonly string[],
): Promise<Map<string, string>> {
  const valid = ids.filter(isUuid);
  if (valid.length === 0) return new Map();
  const { rows } = await namesOfGroups.run(db, { org: orgId, ids: valid });
  return new Map(rows.map((r) => [r.id, r.display_name]));
}

/** The organization's user (not deprovisioned) with this id, or else this userName (in any case). */
export async function findUserByIdOrName(
  db: Kysely<DB>,
  orgId: string,
  idOrName: string,
): Promise<FoundUser | undefined> {
  const byId = isUuid(idOrName) ? (await userById.run(db, { org: orgId, id: idOrName })).rows[0] : undefined;
  const row = byId ?? (await userByName.run(db, { org: orgId, userName: idOrName })).rows[0];
  return row && { id: row.id, userName: row.user_name, displayName: row.display_name, active: row.active };
}
