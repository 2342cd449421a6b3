// What the change feed carries: the types of change, the RFC 9967 event each corresponds to, and a
// change as the feed and its consumers see it.

export const CHANGE_TYPES = [
  'user.created',
  'user.updated',
  'user.deactivated',
  'user.reactivated',
  'user.deprovisioned',
  'group.created',
  'group.updated',
  'group.deleted',
  'group.members_added',
  'group.members_removed',
  'org.deleted',
] as const;

export type ChangeType = (typeof CHANGE_TYPES)[number];

export function isChangeType(value: string): value is ChangeType {
  return (CHANGE_TYPES as readonly string[]).includes(value);
}

const EVENT = 'urn:ietf:params:scim:event:prov:';

/** The SCIM event (RFC 9967 §2.4) a change corresponds to; an organization's deletion has none. */
export const EVENT_URIS: Readonly<Record<ChangeType, string | null>> = {
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
  'org.deleted': null,
};

interface Change {
  /** Unique and stable: a webhook delivery or a consumer can tell a change seen twice. */
  readonly id: string;
  /** Where this change is in the feed: reading `after` it continues with the next one. */
  readonly cursor: string;
  readonly orgId: string;
  readonly type: ChangeType;
  readonly resourceType: 'User' | 'Group' | 'Org';
  readonly resourceId: string;
  readonly occurredAt: string;
  readonly eventUri: string | null;
  /** user.updated, user.deactivated, user.reactivated, group.updated: what changed. */
  readonly changedAttributes?: readonly string[];
  /** user.deprovisioned: the organization's deprovisioning mode that applied. */
  readonly mode?: string;
  /** The resource as the read model shows it after the change; for members, `{userIds}`. */
  readonly data: Readonly<Record<string, unknown>>;
}

/** A change as read: its `data` still the JSON text Postgres sent, to be passed on as it is. */
export type StoredChange = Omit<Change, 'data'> & { readonly dataJson: string };

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
