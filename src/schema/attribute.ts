import type { AttributeDef, AttributeType } from './types.js';

type AttributeOptions = Partial<Omit<AttributeDef, 'name' | 'type' | 'description'>>;

/**
 * An attribute definition with the RFC 7643 §2.2 defaults filled in, so the schema files list only
 * what differs from them: multiValued false, required false, caseExact false, mutability readWrite,
 * returned default, uniqueness none.
 */
export function attribute(
  name: string,
  type: AttributeType,
  description: string,
  options: AttributeOptions = {},
): AttributeDef {
  return {
    name,
    type,
    multiValued: false,
    description,
    required: false,
    caseExact: false,
    mutability: 'readWrite',
    returned: 'default',
    uniqueness: 'none',
    ...options,
  };
}

export function complex(
  name: string,
  description: string,
  subAttributes: readonly AttributeDef[],
  options: AttributeOptions = {},
): AttributeDef {
  return attribute(name, 'complex', description, { ...options, subAttributes });
}
