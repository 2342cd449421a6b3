// How groups are stored, for the filter planner: columns first, the rest in `data`, members as rows.
import { sql } from 'kysely';
import type { StorageMapping } from '../filter/storage.js';

/**
 * A group's meta.lastModified: the later of its row's time (its attributes) and the last change of
 * its members (group_member_changes, one row per connection shard).
 */
export const groupLastModified = (table: string) =>
  sql<Date>`greatest(${sql.ref(`${table}.updated_at`)}, (
    select max(c.changed_at) from group_member_changes as c
    where c.org_id = ${sql.ref(`${table}.org_id`)} and c.group_id = ${sql.ref(`${table}.id`)}))`;

export const groupStorage: StorageMapping = {
  table: 'groups',
  data: 'data',
  columns: {
    id: { column: 'id', type: 'uuid' },
    displayName: { column: 'display_name', type: 'text' },
    externalId: { column: 'external_id', type: 'text' },
    'meta.created': { column: 'created_at', type: 'timestamptz' },
    'meta.lastModified': { computed: groupLastModified, type: 'timestamptz' },
    'meta.resourceType': { constant: 'Group' },
  },
  relations: {
    members: {
      rows: (owner) =>
        sql`group_members as gm where gm.org_id = ${sql.ref(`${owner}.org_id`)} and gm.group_id = ${sql.ref(`${owner}.id`)}`,
      subs: {
        value: { column: 'gm.user_id', type: 'uuid' },
        display: { column: 'gm.display', type: 'text' },
        type: { constant: 'User' },
      },
    },
  },
  indexedValues: new Map(),
};
