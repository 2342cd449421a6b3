// RFC 7643 §4.1 (User resource) as represented in §8.7.1. Only characteristics that differ from the
// §2.2 defaults are spelled out; `attribute` and `complex` fill in the rest. `id` and `meta` are common
// attributes handled elsewhere.
import { attribute, complex, INDEXED_STRING_MAX_LENGTH } from './attribute.js';
import type { AttributeDef, SchemaDef } from './types.js';

export const USER_SCHEMA_URN = 'urn:ietf:params:scim:schemas:core:2.0:User';

// A reference is case exact (RFC 7643 §2.3.7), although the §8.7.1 listing prints caseExact false for
// reference-typed attributes (erratum 6001); we follow §2.3.7.
const REFERENCE_CASE_EXACT = { caseExact: true } as const;

/** The value/display/type/primary sub-attributes shared by most multi-valued User attributes. */
function multiValuedSubAttributes(
  valueDescription: string,
  canonicalTypes?: readonly string[],
  value: AttributeDef = attribute('value', 'string', valueDescription),
): AttributeDef[] {
  return [
    value,
    attribute('display', 'string', 'A human-readable name, used for display purposes.'),
    attribute(
      'type',
      'string',
      "A label for the value's function.",
      canonicalTypes ? { canonicalValues: canonicalTypes } : {},
    ),
    attribute('primary', 'boolean', 'Whether this is the preferred value; true appears at most once.'),
  ];
}

export const coreUserSchema: SchemaDef = {
  id: USER_SCHEMA_URN,
  name: 'User',
  description: 'User Account',
  attributes: [
    // externalId is a common attribute (RFC 7643 §3.1), not part of the §4.1 User schema. We declare it
    // here on purpose so that discovery tools reading /Schemas see it and its characteristics.
    attribute('externalId', 'string', 'Identifier of the resource as defined by the provisioning client.', {
      caseExact: true,
      maxLength: INDEXED_STRING_MAX_LENGTH,
    }),
    attribute('userName', 'string', 'Unique identifier the user authenticates with. REQUIRED.', {
      required: true,
      uniqueness: 'server',
      maxLength: INDEXED_STRING_MAX_LENGTH,
    }),
    complex('name', "The components of the user's real name.", [
      attribute('formatted', 'string', 'The full name, formatted for display.'),
      attribute('familyName', 'string', 'The family (last) name.'),
      attribute('givenName', 'string', 'The given (first) name.'),
      attribute('middleName', 'string', 'The middle name(s).'),
      attribute('honorificPrefix', 'string', "The honorific prefix(es), e.g. 'Ms.'."),
      attribute('honorificSuffix', 'string', "The honorific suffix(es), e.g. 'III'."),
    ]),
    attribute('displayName', 'string', 'The name of the user, suitable for display.'),
    attribute('nickName', 'string', 'The casual way to address the user.'),
    attribute('profileUrl', 'reference', "A URL of the user's online profile.", {
      referenceTypes: ['external'],
      ...REFERENCE_CASE_EXACT,
    }),
    attribute('title', 'string', "The user's title, e.g. 'Vice President'."),
    attribute('userType', 'string', "The user's relationship to the organization, e.g. 'Employee'."),
    attribute('preferredLanguage', 'string', "The user's preferred written or spoken language."),
    attribute('locale', 'string', "The user's default location, used for localization."),
    attribute('timezone', 'string', "The user's time zone in IANA format, e.g. 'America/Los_Angeles'."),
    // A user is active unless told otherwise: the response, the `active` column and filters agree.
    attribute('active', 'boolean', "The user's administrative status.", { defaultValue: true }),
    attribute('password', 'string', "The user's cleartext password; never returned.", {
      mutability: 'writeOnly',
      returned: 'never',
    }),
    complex(
      'emails',
      'Email addresses for the user.',
      multiValuedSubAttributes(
        'An email address.',
        ['work', 'home', 'other'],
        // In the GIN index that answers Entra's `emails[type eq "work"].value eq "…"`.
        attribute('value', 'string', 'An email address.', { maxLength: INDEXED_STRING_MAX_LENGTH }),
      ),
      { multiValued: true },
    ),
    complex(
      'phoneNumbers',
      'Phone numbers for the user.',
      multiValuedSubAttributes('A phone number.', ['work', 'home', 'mobile', 'fax', 'pager', 'other']),
      { multiValued: true },
    ),
    complex(
      'ims',
      'Instant messaging addresses for the user.',
      multiValuedSubAttributes('An instant messaging address.', [
        'aim',
        'gtalk',
        'icq',
        'xmpp',
        'msn',
        'skype',
        'qq',
        'yahoo',
      ]),
      { multiValued: true },
    ),
    complex(
      'photos',
      'URLs of photos of the user.',
      multiValuedSubAttributes(
        'URL of a photo.',
        ['photo', 'thumbnail'],
        attribute('value', 'reference', 'URL of a photo of the user.', {
          referenceTypes: ['external'],
          ...REFERENCE_CASE_EXACT,
        }),
      ),
      { multiValued: true },
    ),
    complex(
      'addresses',
      'Physical mailing addresses for the user.',
      [
        attribute('formatted', 'string', 'The full mailing address, formatted for display.'),
        attribute('streetAddress', 'string', 'The full street address component.'),
        attribute('locality', 'string', 'The city or locality.'),
        attribute('region', 'string', 'The state or region.'),
        attribute('postalCode', 'string', 'The zip or postal code.'),
        attribute('country', 'string', 'The country name component.'),
        attribute('type', 'string', "A label for the address's function.", {
          canonicalValues: ['work', 'home', 'other'],
        }),
        // Not in the §8.7.1 listing, but §4.1.2 and §2.4 give addresses a primary sub-attribute.
        attribute('primary', 'boolean', 'Whether this is the preferred address; true appears at most once.'),
      ],
      { multiValued: true },
    ),
    complex(
      'groups',
      'Groups the user belongs to, directly or indirectly. Managed through the Group resource.',
      [
        attribute('value', 'string', 'The id of the group.', { mutability: 'readOnly' }),
        attribute('$ref', 'reference', 'The URI of the group.', {
          referenceTypes: ['User', 'Group'],
          mutability: 'readOnly',
          ...REFERENCE_CASE_EXACT,
        }),
        attribute('display', 'string', 'A human-readable name of the group.', { mutability: 'readOnly' }),
        attribute('type', 'string', 'Whether membership is direct or indirect.', {
          canonicalValues: ['direct', 'indirect'],
          mutability: 'readOnly',
        }),
      ],
      { multiValued: true, mutability: 'readOnly' },
    ),
    complex(
      'entitlements',
      'Entitlements the user has.',
      multiValuedSubAttributes('The value of an entitlement.'),
      { multiValued: true },
    ),
    complex('roles', "Roles of the user, e.g. 'Student'.", multiValuedSubAttributes('The value of a role.'), {
      multiValued: true,
    }),
    complex(
      'x509Certificates',
      'Certificates issued to the user.',
      multiValuedSubAttributes(
        'A certificate.',
        undefined,
        // A binary is case exact (RFC 7643 §2.3.6); the §8.7.1 listing prints caseExact false.
        attribute('value', 'binary', 'The DER-encoded X.509 certificate, base64.', { caseExact: true }),
      ),
      { multiValued: true },
    ),
  ],
};
