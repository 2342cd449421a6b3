// RFC 7643 §4.3 (Enterprise User extension) as represented in §8.7.1. Only characteristics that differ
// from the §2.2 defaults are spelled out.
import { attribute, complex } from './attribute.js';
import type { SchemaDef } from './types.js';

export const ENTERPRISE_USER_SCHEMA_URN = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

export const enterpriseUserSchema: SchemaDef = {
  id: ENTERPRISE_USER_SCHEMA_URN,
  name: 'EnterpriseUser',
  description: 'Enterprise User',
  attributes: [
    attribute('employeeNumber', 'string', 'Identifier assigned to the person by the organization.'),
    attribute('costCenter', 'string', 'Name of a cost center.'),
    attribute('organization', 'string', 'Name of an organization.'),
    attribute('division', 'string', 'Name of a division.'),
    attribute('department', 'string', 'Name of a department.'),
    complex('manager', "The user's manager, referenced by the manager's User id.", [
      attribute('value', 'string', "The id of the manager's User resource."),
      attribute('$ref', 'reference', "The URI of the manager's User resource.", {
        referenceTypes: ['User'],
        // A reference is case exact (RFC 7643 §2.3.7); the §8.7.1 listing prints false.
        caseExact: true,
      }),
      attribute('displayName', 'string', "The manager's displayName.", { mutability: 'readOnly' }),
    ]),
  ],
};
