// What scimd sends a product, as types: each change of the feed (GET /admin/v1/changes) and each
// webhook delivery, discriminated by `type`. It imports nothing, so that `scimd` and `scimd/client`
// give a product these types without any of the server.

/** Every type of change the feed emits; GET /admin/v1/webhooks/events lists the same. */
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
  'user.roles_changed',
  'user.entitlements_changed',
  'role_mappings.updated',
  'org.deleted',
] as const;

export type ChangeType = (typeof CHANGE_TYPES)[number];

/** The organization's deprovisioning mode, which a `user.deprovisioned` says it applied. */
export type DeprovisioningMode = 'deactivate' | 'anonymize' | 'delete';

type ProvisioningEvent<E extends string> = `urn:ietf:params:scim:event:prov:${E}`;

/** The SCIM event (RFC 9967 §2.4) each type of change corresponds to; an organization's deletion has none. */
export interface ChangeEventUris {
  readonly 'user.created': ProvisioningEvent<'create:full'>;
  readonly 'user.updated': ProvisioningEvent<'patch:full'>;
  readonly 'user.deactivated': ProvisioningEvent<'deactivate'>;
  readonly 'user.reactivated': ProvisioningEvent<'activate'>;
  readonly 'user.deprovisioned': ProvisioningEvent<'delete'>;
  readonly 'group.created': ProvisioningEvent<'create:full'>;
  readonly 'group.updated': ProvisioningEvent<'patch:full'>;
  readonly 'group.deleted': ProvisioningEvent<'delete'>;
  readonly 'group.members_added': ProvisioningEvent<'patch:notice'>;
  readonly 'group.members_removed': ProvisioningEvent<'patch:notice'>;
  readonly 'user.roles_changed': null;
  readonly 'user.entitlements_changed': null;
  readonly 'role_mappings.updated': null;
  readonly 'org.deleted': null;
}

/** A row of the read model's `directory.users` as JSON; timestamps are ISO 8601 text. */
export interface DirectoryUser {
  readonly org_id: string;
  readonly id: string;
  readonly external_id: string | null;
  readonly user_name: string;
  readonly active: boolean;
  readonly deprovisioned: boolean;
  readonly deprovisioned_at: string | null;
  readonly display_name: string | null;
  readonly given_name: string | null;
  readonly family_name: string | null;
  /** The email marked primary, else the first. */
  readonly primary_email: string | null;
  readonly emails: readonly string[];
  readonly title: string | null;
  readonly department: string | null;
  readonly manager_id: string | null;
  readonly employee_number: string | null;
  /** Every SCIM attribute of the user; an extension's under its schema URN. */
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly created_at: string;
  readonly updated_at: string;
}

/** A row of the read model's `directory.groups` as JSON. */
export interface DirectoryGroup {
  readonly org_id: string;
  readonly id: string;
  readonly external_id: string | null;
  readonly display_name: string;
  /** Every SCIM attribute of the group but its members. */
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly created_at: string;
  /** When the group's own attributes last changed (not its members). */
  readonly updated_at: string;
}

/** What every change carries. */
export interface ChangeFields<T extends ChangeType> {
  /** Unique and stable: a change seen twice has the same id. */
  readonly id: string;
  /** The change's position in the feed: reading `after` it continues with the next change. */
  readonly cursor: string;
  readonly orgId: string;
  readonly type: T;
  /** The user's, the group's, or for `org.deleted` the organization's id. */
  readonly resourceId: string;
  readonly occurredAt: string;
  readonly eventUri: ChangeEventUris[T];
}

/** A user was created. */
export interface UserCreated extends ChangeFields<'user.created'> {
  readonly resourceType: 'User';
  readonly data: DirectoryUser;
}

/** A user changed: `user.updated`, or `active` flipped (`user.deactivated`, `user.reactivated`). */
export interface UserChanged<T extends 'user.updated' | 'user.deactivated' | 'user.reactivated'>
  extends ChangeFields<T> {
  readonly resourceType: 'User';
  /** The attributes that changed, sorted; an extension's as `<schema URN>:<attribute>`. */
  readonly changedAttributes: readonly string[];
  /** The row after the change. */
  readonly data: DirectoryUser;
}

/** A user was deprovisioned (SCIM DELETE), as the organization's deprovisioning mode says. */
export interface UserDeprovisioned extends ChangeFields<'user.deprovisioned'> {
  readonly resourceType: 'User';
  readonly mode: DeprovisioningMode;
  /** What deprovisioning changed; absent in `delete` mode, where the row is gone. */
  readonly changedAttributes?: readonly string[];
  /** The row after; in `delete` mode its last state, marked deprovisioned. */
  readonly data: DirectoryUser;
}

/** A group was created or deleted; `data` is its row (the last one, for a deletion). */
export interface GroupWritten<T extends 'group.created' | 'group.deleted'> extends ChangeFields<T> {
  readonly resourceType: 'Group';
  readonly data: DirectoryGroup;
}

/** A group's own attributes changed. */
export interface GroupUpdated extends ChangeFields<'group.updated'> {
  readonly resourceType: 'Group';
  readonly changedAttributes: readonly string[];
  readonly data: DirectoryGroup;
}

/** Users joined or left the group `resourceId`, by any write; at most 1,000 of them a change. */
export interface GroupMembersChanged<T extends 'group.members_added' | 'group.members_removed'>
  extends ChangeFields<T> {
  readonly resourceType: 'Group';
  readonly data: { readonly userIds: readonly string[] };
}

/** A value of a user's effective roles or entitlements and what gives it (`idp`, `group:<id>`, `default`). */
export interface EffectiveValue {
  readonly value: string;
  readonly sources: readonly string[];
}

/**
 * The user's effective roles changed, for any reason (its `roles`, a membership of a mapped group, a
 * mapping, the catalogue, a deactivation): the whole new set, and the values added and removed.
 */
export interface UserRolesChanged extends ChangeFields<'user.roles_changed'> {
  readonly resourceType: 'User';
  readonly data: {
    readonly roles: readonly EffectiveValue[];
    readonly added: readonly string[];
    readonly removed: readonly string[];
  };
}

/** The user's effective entitlements changed: the whole new set, and the values added and removed. */
export interface UserEntitlementsChanged extends ChangeFields<'user.entitlements_changed'> {
  readonly resourceType: 'User';
  readonly data: {
    readonly entitlements: readonly EffectiveValue[];
    readonly added: readonly string[];
    readonly removed: readonly string[];
  };
}

/** A group mapped to a role, by its id or by its displayName (in any case). */
export type MappedGroup = { readonly id: string } | { readonly displayName: string };

/** The organization's role mappings, default role or mode changed: `data` is all of them as they now are. */
export interface RoleMappingsUpdated extends ChangeFields<'role_mappings.updated'> {
  readonly resourceType: 'Org';
  readonly data: {
    readonly mappings: readonly { readonly group: MappedGroup; readonly role: string }[];
    readonly defaultRole: string | null;
    readonly mode: 'multiple' | 'single';
  };
}

/** The organization was deleted; its earlier changes were removed with its data. */
export interface OrgDeleted extends ChangeFields<'org.deleted'> {
  readonly resourceType: 'Org';
  readonly data: { readonly id: string; readonly name: string };
}

/** A change of the feed: `switch (change.type)` narrows it. A newer scimd may add types: ignore those you do not know. */
export type Change =
  | UserCreated
  | UserChanged<'user.updated'>
  | UserChanged<'user.deactivated'>
  | UserChanged<'user.reactivated'>
  | UserDeprovisioned
  | GroupWritten<'group.created'>
  | GroupUpdated
  | GroupWritten<'group.deleted'>
  | GroupMembersChanged<'group.members_added'>
  | GroupMembersChanged<'group.members_removed'>
  | UserRolesChanged
  | UserEntitlementsChanged
  | RoleMappingsUpdated
  | OrgDeleted;

/** The change of type `T` (or of any type of a union). */
export type ChangeOf<T extends ChangeType> = Extract<Change, { readonly type: T }>;

/** A page of the feed: `nextCursor` is where the next read continues. */
export interface FeedPage<C extends Change = Change> {
  readonly changes: readonly C[];
  readonly nextCursor: string;
}

/**
 * A webhook delivery of one change: `id` is the delivery's (the same on every retry of the change to
 * the endpoint: dedupe by it), `timestamp` the change's `occurredAt`, `data` the change as the feed shows it.
 */
export interface ChangeDelivery<C extends Change = Change> {
  readonly id: string;
  readonly type: C['type'];
  readonly timestamp: string;
  readonly data: C;
}

/** What POST /admin/v1/webhooks/{id}/ping sends, outside the feed. */
export interface PingDelivery {
  readonly id: string;
  readonly type: 'webhook.ping';
  readonly timestamp: string;
  readonly data: { readonly webhookId: string };
}

/** The body of a webhook delivery: `switch (delivery.type)` narrows it, `data` included. */
export type WebhookDelivery =
  | { readonly [T in ChangeType]: ChangeDelivery<ChangeOf<T>> }[ChangeType]
  | PingDelivery;
