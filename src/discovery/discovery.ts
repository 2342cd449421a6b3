// RFC 7644 §4 discovery documents, rendered from the schema registry and the capabilities.

import type { ScimResource } from '../resources/validate.js';
import type { AttributeDef, ResourceTypeDef, SchemaDef } from '../schema/types.js';
import { capabilities } from './capabilities.js';

const SPC_SCHEMA_URN = 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig';
const RESOURCE_TYPE_SCHEMA_URN = 'urn:ietf:params:scim:schemas:core:2.0:ResourceType';
const SCHEMA_SCHEMA_URN = 'urn:ietf:params:scim:schemas:core:2.0:Schema';

export function serviceProviderConfig(baseUrl: string): ScimResource {
  return {
    schemas: [SPC_SCHEMA_URN],
    documentationUri: 'https://www.rfc-editor.org/rfc/rfc7644',
    patch: { supported: capabilities.patch },
    // Bulk, password changes and ETags are not supported, so not advertised. Every field is still
    // filled, because some checkers read maxOperations and maxPayloadSize regardless.
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: capabilities.filter, maxResults: capabilities.maxPageSize },
    changePassword: { supported: false },
    sort: { supported: capabilities.sort },
    etag: { supported: false },
    // RFC 9865 §4
    pagination: {
      cursor: capabilities.cursorPagination,
      index: true,
      defaultPaginationMethod: 'index',
      defaultPageSize: capabilities.defaultPageSize,
      maxPageSize: capabilities.maxPageSize,
      cursorTimeout: capabilities.cursorTimeout,
    },
    // draft-ietf-scim-roles-entitlements: /Roles and /Entitlements answer every organization (the
    // resource types appear once its catalogue of the kind has entries); a User holds several of
    // each, with primary and type kept as sent.
    RolesAndEntitlements: {
      roles: { supported: true, multipleRolesSupported: true, primarySupported: true, typeSupported: true },
      entitlements: {
        supported: true,
        multipleEntitlementsSupported: true,
        primarySupported: true,
        typeSupported: true,
      },
    },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'OAuth Bearer Token',
        description: "Authentication with the organization's SCIM bearer token",
        specUri: 'https://www.rfc-editor.org/info/rfc6750',
        primary: true,
      },
    ],
    meta: {
      resourceType: 'ServiceProviderConfig',
      location: `${baseUrl}/ServiceProviderConfig`,
    },
  };
}

/** What a ResourceType document shows of a type: User and Group, or a catalogue's (Role, Entitlement). */
type RenderedType = Pick<ResourceTypeDef, 'name' | 'endpoint' | 'description' | 'schema'> & {
  readonly id: string;
  readonly schemaExtensions: readonly { readonly schema: string; readonly required: boolean }[];
};

export function renderResourceType(type: RenderedType, baseUrl: string): ScimResource {
  return {
    schemas: [RESOURCE_TYPE_SCHEMA_URN],
    id: type.id,
    name: type.name,
    endpoint: type.endpoint,
    description: type.description,
    schema: type.schema,
    schemaExtensions: type.schemaExtensions.map((e) => ({ schema: e.schema, required: e.required })),
    meta: { resourceType: 'ResourceType', location: `${baseUrl}/ResourceTypes/${type.id}` },
  };
}

function renderAttribute(attr: AttributeDef): Record<string, unknown> {
  return {
    name: attr.name,
    type: attr.type,
    multiValued: attr.multiValued,
    description: attr.description,
    required: attr.required,
    caseExact: attr.caseExact,
    mutability: attr.mutability,
    returned: attr.returned,
    uniqueness: attr.uniqueness,
    ...(attr.canonicalValues ? { canonicalValues: attr.canonicalValues } : {}),
    ...(attr.referenceTypes ? { referenceTypes: attr.referenceTypes } : {}),
    ...(attr.subAttributes ? { subAttributes: attr.subAttributes.map(renderAttribute) } : {}),
  };
}

export function renderSchema(schema: SchemaDef, baseUrl: string): ScimResource {
  return {
    schemas: [SCHEMA_SCHEMA_URN],
    id: schema.id,
    name: schema.name,
    description: schema.description,
    attributes: schema.attributes.map(renderAttribute),
    meta: { resourceType: 'Schema', location: `${baseUrl}/Schemas/${schema.id}` },
  };
}
