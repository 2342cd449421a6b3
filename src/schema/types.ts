// The shapes of the schema registry: RFC 7643 §7 (schema definitions) and §6 (resource types).
// Everything that validates, projects, filters or patches a resource reads these definitions.

export type AttributeType =
  | 'string'
  | 'boolean'
  | 'decimal'
  | 'integer'
  | 'dateTime'
  | 'reference'
  | 'complex'
  | 'binary';

type Mutability = 'readOnly' | 'readWrite' | 'immutable' | 'writeOnly';
type Returned = 'always' | 'never' | 'default' | 'request';
type Uniqueness = 'none' | 'server' | 'global';

export interface AttributeDef {
  readonly name: string;
  readonly type: AttributeType;
  readonly multiValued: boolean;
  readonly description: string;
  readonly required: boolean;
  readonly caseExact: boolean;
  readonly mutability: Mutability;
  readonly returned: Returned;
  readonly uniqueness: Uniqueness;
  readonly canonicalValues?: readonly string[];
  /**
   * scimd's own characteristic, not RFC 7643's (so /Schemas does not show it): the longest value of
   * a string, reference or binary, in characters.
   */
  readonly maxLength?: number;
  /**
   * scimd's own characteristic: the value a resource has when a create or replace does not give one.
   * Such an attribute is never unassigned: PATCH cannot remove it, only set it.
   */
  readonly defaultValue?: boolean;
  readonly referenceTypes?: readonly string[];
  readonly subAttributes?: readonly AttributeDef[];
}

export interface SchemaDef {
  /** The schema URN, e.g. urn:ietf:params:scim:schemas:core:2.0:User */
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly attributes: readonly AttributeDef[];
}

export type ResourceTypeName = 'User' | 'Group';

export interface ResourceTypeDef {
  readonly id: ResourceTypeName;
  readonly name: string;
  /** Relative to the organization's base URL, e.g. /Users */
  readonly endpoint: string;
  readonly description: string;
  /** URN of the core schema */
  readonly schema: string;
  /** The extensions: the standard ones, then the organization's own (custom-schemas.ts). */
  readonly schemaExtensions: readonly SchemaExtension[];
}

interface SchemaExtension {
  /** URN of the extension schema */
  readonly schema: string;
  readonly required: boolean;
  readonly definition: SchemaDef;
}
