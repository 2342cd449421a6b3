// RFC 7643 §4.2 (Group resource) as represented in §8.7.1. Only characteristics that differ from the
// §2.2 defaults are spelled out. `id` and `meta` are common attributes handled elsewhere.
import { attribute, complex, INDEXED_STRING_MAX_LENGTH } from './attribute.js';
import type { SchemaDef } from './types.js';

export const GROUP_SCHEMA_URN = 'urn:ietf:params:scim:schemas:core:2.0:Group';

export const coreGroupSchema: SchemaDef = {
  id: GROUP_SCHEMA_URN,
  name: 'Group',
  description: 'Group',
  attributes: [
    // externalId is a common attribute (RFC 7643 §3.1), not part of the §4.2 Group schema. We declare it
    // here on purpose so that discovery tools reading /Schemas see it and its characteristics.
    attribute('externalId', 'string', 'Identifier of the resource as defined by the provisioning client.', {
      caseExact: true,
      maxLength: INDEXED_STRING_MAX_LENGTH,
    }),
    // §4.2 calls displayName REQUIRED (the §8.7.1 listing prints required false, uniqueness none).
    // scimd enforces per-organization, case-insensitive uniqueness, hence uniqueness 'server'.
    attribute('displayName', 'string', 'A human-readable name for the group. REQUIRED.', {
      required: true,
      uniqueness: 'server',
      maxLength: INDEXED_STRING_MAX_LENGTH,
    }),
    complex(
      'members',
      'Members of the group: Users or other Groups.',
      [
        attribute('value', 'string', 'The id of the member resource.', { mutability: 'immutable' }),
        attribute('$ref', 'reference', 'The URI of the member resource.', {
          referenceTypes: ['User', 'Group'],
          mutability: 'immutable',
          // A reference is case exact (RFC 7643 §2.3.7); the §8.7.1 listing prints false.
          caseExact: true,
        }),
        // Not in the §8.7.1 listing, but used by the RFC's own Group example (§8.4). readWrite here, not
        // readOnly: Okta sends a member's display and expects it kept; without one, scimd derives it
        // from the user (displayName, else userName).
        attribute('display', 'string', 'A human-readable name of the member.'),
        attribute('type', 'string', 'The type of the member resource.', {
          canonicalValues: ['User', 'Group'],
          mutability: 'immutable',
        }),
      ],
      { multiValued: true },
    ),
  ],
};
