import type { AttributeDef, AttributeType } from './types.js';

/**
 * Longest value, in characters, of a string that an index holds (userName, externalId, emails,
 * a group's displayName): a Postgres B-tree or GIN entry holds about 2,700 bytes, and a character
 * may take four.
 */
export const INDEXED_STRING_MAX_LENGTH = 512;
/**
 * Longest value of any other string or reference: generous for every real attribute, and a bound on
 * what one value can make a substring search scan.
 */
export const STRING_MAX_LENGTH = 4096;
/** Longest base64 text of a binary value (a certificate chain). */
const BINARY_MAX_LENGTH = 16_384;

const MAX_LENGTH: Partial<Record<AttributeType, number>> = {
  string: STRING_MAX_LENGTH,
  reference: STRING_MAX_LENGTH,
  binary: BINARY_MAX_LENGTH,
};

type AttributeOptions = Partial<Omit<AttributeDef, 'name' | 'type' | 'description'>>;

/**
 * An attribute definition with the RFC 7643 §2.2 defaults filled in, so the schema files list only
 * what differs from them: multiValued false, required false, caseExact false, mutability readWrite,
 * returned default, uniqueness none; and, for text, the longest value scimd stores.
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
    ...(MAX_LENGTH[type] !== undefined ? { maxLength: MAX_LENGTH[type] } : {}),
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
