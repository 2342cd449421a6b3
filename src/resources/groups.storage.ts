// How groups are stored, for the filter planner: columns first, the rest in `data`, members as rows.
import { sql } from 'kysely';
import type { StorageMapping } from '../filter/storage.js';

export const groupStorage: StorageMapping = {
  table: 'groups',
  data: 'data',
  columns: {
    id: { column: 'id', type: 'uuid' },
    displayName: { column: 'display_name', type: 'text' },
    externalId: { column: 'external_id', type: 'text' },
    'meta.created': { column: 'created_at', type: 'timestamptz' },
    'meta.lastModified': { column: 'updated_at', type: 'timestamptz' },
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
  indexedValues: new Set(),
};
