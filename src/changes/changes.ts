// What the change feed carries on the server: the RFC 9967 event each type of change corresponds to,
// and a change as read, its data still JSON text. The types a product sees are change-types.ts's.
import {
  CHANGE_TYPES,
  type Change,
  type ChangeEventUris,
  type ChangeType,
  type DeprovisioningMode,
} from './change-types.js';

export { CHANGE_TYPES, type ChangeType };

export function isChangeType(value: string): value is ChangeType {
  return (CHANGE_TYPES as readonly string[]).includes(value);
}

const EVENT = 'urn:ietf:params:scim:event:prov:';

/** The SCIM event (RFC 9967 §2.4) a change corresponds to; an organization's deletion and role changes have none. */
export const EVENT_URIS: ChangeEventUris = {
  'user.created': `${EVENT}create:full`,
  'user.updated': `${EVENT}patch:full`,
  'user.deactivated': `${EVENT}deactivate`,
  'user.reactivated': `${EVENT}activate`,
  'user.deprovisioned': `${EVENT}delete`,
  'group.created': `${EVENT}create:full`,
  'group.updated': `${EVENT}patch:full`,
  'group.deleted': `${EVENT}delete`,
  'group.members_added': `${EVENT}patch:notice`,
  'group.members_removed': `${EVENT}patch:notice`,
  // Derived from SCIM writes and the product's own mappings, not writes of a SCIM resource: no event.
  'user.roles_changed': null,
  'user.entitlements_changed': null,
  'role_mappings.updated': null,
  'org.deleted': null,
};

/**
 * A change as read: its `data` still the JSON text Postgres sent, to be passed on as it is. Its other
 * fields are those of change-types.ts's Change, not narrowed by type.
 */
export interface StoredChange {
  readonly id: string;
  readonly cursor: string;
  readonly orgId: string;
  readonly type: ChangeType;
  readonly resourceType: Change['resourceType'];
  readonly resourceId: string;
  readonly occurredAt: string;
  readonly eventUri: Change['eventUri'];
  readonly changedAttributes?: readonly string[];
  readonly mode?: DeprovisioningMode;
  readonly dataJson: string;
}

/** The change's JSON text, `data` last. Its data is spliced in as read: parsing and serializing it
 * again would be most of the cost of a page. */
export function changeJson(change: StoredChange): string {
  const { dataJson, ...rest } = change;
  return `${JSON.stringify(rest).slice(0, -1)},"data":${dataJson}}`;
}

/** A page of the feed. */
export interface ChangePage {
  readonly changes: readonly StoredChange[];
  readonly nextCursor: string;
}

/** A page as the JSON text of `{changes, nextCursor}`. */
export function pageJson(page: ChangePage): string {
  return `{"changes":[${page.changes.map(changeJson).join(',')}],"nextCursor":${JSON.stringify(page.nextCursor)}}`;
}
