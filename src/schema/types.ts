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

export type Mutability = 'readOnly' | 'readWrite' | 'immutable' | 'writeOnly';
export type Returned = 'always' | 'never' | 'default' | 'request';
export type Uniqueness = 'none' | 'server' | 'global';

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
  readonly schemaExtensions: readonly { readonly schema: string; readonly required: boolean }[];
}
