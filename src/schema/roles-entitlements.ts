// The Role and Entitlement resources of draft-ietf-scim-roles-entitlements: their schemas and resource
// types, as /Schemas and /ResourceTypes show them to an organization whose catalogue has that kind.
import { attribute } from './attribute.js';
import type { AttributeDef, SchemaDef } from './types.js';

const ROLE_SCHEMA_URN = 'urn:ietf:params:scim:schemas:core:2.0:Role';
const ENTITLEMENT_SCHEMA_URN = 'urn:ietf:params:scim:schemas:core:2.0:Entitlement';

/** What a catalogue resource type is, beside User and Group: read-only, with no extensions. */
export interface CatalogueResourceType {
  readonly id: 'Role' | 'Entitlement';
  readonly name: string;
  readonly endpoint: '/Roles' | '/Entitlements';
  readonly description: string;
  readonly schema: string;
  readonly schemaExtensions: readonly [];
  readonly definition: SchemaDef;
}

// The draft's attributes that scimd fills: every one is the service provider's, so readOnly.
function attributesOf(kind: string): AttributeDef[] {
  const readOnly = { mutability: 'readOnly' } as const;
  return [
    attribute('value', 'string', `The value of ${kind}: what a User's ${kind}s attribute carries.`, {
      ...readOnly,
      required: true,
      uniqueness: 'server',
    }),
    attribute('display', 'string', 'A human-readable name, primarily used for display purposes.', readOnly),
    attribute('type', 'string', `A label indicating the ${kind}'s function.`, readOnly),
    attribute('supported', 'boolean', `Whether the ${kind} is enabled and usable in the service.`, {
      ...readOnly,
      required: true,
    }),
    // Not in the draft: the catalogue's description, which Okta's entitlement settings can map.
    attribute('description', 'string', `What the ${kind} grants.`, readOnly),
  ];
}

const roleSchema: SchemaDef = {
  id: ROLE_SCHEMA_URN,
  name: 'Role',
  description: 'Role',
  attributes: attributesOf('role'),
};

const entitlementSchema: SchemaDef = {
  id: ENTITLEMENT_SCHEMA_URN,
  name: 'Entitlement',
  description: 'Entitlement',
  attributes: attributesOf('entitlement'),
};

export const roleResourceType: CatalogueResourceType = {
  id: 'Role',
  name: 'Role',
  endpoint: '/Roles',
  description: 'The roles a User of this organization may hold',
  schema: ROLE_SCHEMA_URN,
  schemaExtensions: [],
  definition: roleSchema,
};

export const entitlementResourceType: CatalogueResourceType = {
  id: 'Entitlement',
  name: 'Entitlement',
  endpoint: '/Entitlements',
  description: 'The entitlements a User of this organization may hold',
  schema: ENTITLEMENT_SCHEMA_URN,
  schemaExtensions: [],
  definition: entitlementSchema,
};
