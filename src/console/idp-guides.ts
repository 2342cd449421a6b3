// The setup walkthroughs a setup link shows an IT admin: how to connect Okta or Microsoft Entra ID to
// this organization's SCIM base URL, with its URL, custom attributes and group setting filled in. The
// text is the customer's to read under the operator's brand: it calls the server "this service".
import { ENTERPRISE_USER_SCHEMA_URN as ENTERPRISE_USER } from '../schema/enterprise-user.js';
import type { AttributeDef, AttributeType } from '../schema/types.js';

export type IdpName = 'okta' | 'entra';
export const IDPS: readonly IdpName[] = ['okta', 'entra'];

/** A custom attribute of the organization's User resource, from its own schema extensions. */
export interface CustomUserAttribute {
  readonly schemaUrn: string;
  readonly attribute: AttributeDef;
}

export interface GuideInput {
  /** Absolute, no trailing slash. */
  readonly scimBaseUrl: string;
  readonly groupSync: boolean;
  readonly customAttributes: readonly CustomUserAttribute[];
  /** The organization's catalogue: its roles (value and name) and whether it has entitlements. */
  readonly catalogue?: {
    readonly roles: readonly { readonly value: string; readonly displayName: string }[];
    readonly entitlements: boolean;
  };
}

/**
 * A value the IT admin copies into the IdP's screen; `token` marks where the page offers to generate a
 * token.
 */
export type GuideValue =
  | { readonly label: string; readonly value: string }
  | { readonly label: string; readonly token: true };

interface GuideStep {
  readonly title: string;
  /** Plain-text paragraphs (no HTML; the page escapes them). Use ' → ' between menu items. */
  readonly text: readonly string[];
  readonly values?: readonly GuideValue[];
}

interface AttributeMapping {
  /**
   * What the IdP shows for this attribute: Okta's attribute variable name / Entra's source attribute
   * (or expression).
   */
  readonly idpAttribute: string;
  /**
   * The SCIM attribute it reaches, as a path scimd understands, e.g. `name.givenName`,
   * `emails[type eq "work"].value`, `urn:…:enterprise:2.0:User:department`, or `<URN>:<attr>` for
   * custom ones.
   */
  readonly scimAttribute: string;
  /** Empty when the default mapping already does it; otherwise what the admin must do. */
  readonly note: string;
}

export interface IdpGuide {
  readonly idp: IdpName;
  /** 'Okta' or 'Microsoft Entra ID' */
  readonly title: string;
  readonly steps: readonly GuideStep[];
  readonly uniqueIdentifier: {
    readonly idpAttribute: string;
    readonly scimAttribute: 'userName';
    readonly note: string;
  };
  readonly mappings: readonly AttributeMapping[];
  /** What to do about groups, given groupSync. */
  readonly groups: readonly string[];
  /** How the IdP assigns the catalogue's roles (and Okta its entitlements); absent while it is empty. */
  readonly roles?: RolesPart;
}

/** The IdP's own way to roles: steps, and for Okta a table of its entitlement settings. */
interface RolesPart {
  readonly title: string;
  readonly steps: readonly GuideStep[];
  /** A setting per row: its name, then its value for each column. */
  readonly settings?: {
    readonly columns: readonly string[];
    readonly rows: readonly (readonly [setting: string, ...values: string[]])[];
  };
}

/**
 * Entra's opt-in flag for RFC 7644 PATCH bodies (lower-case ops, boolean `active`, member removal by
 * filter). scimd accepts the default shapes too; the flag only makes Entra's requests standard.
 */
const ENTRA_SCIM_FLAG = 'aadOptscim062020';

export function isIdpName(value: string): value is IdpName {
  return (IDPS as readonly string[]).includes(value);
}

export function idpGuide(idp: IdpName, input: GuideInput): IdpGuide {
  return idp === 'okta' ? oktaGuide(input) : entraGuide(input);
}

/** The name an IdP gives a custom attribute's target: `<URN>:<attribute>` (RFC 7644 §3.10). */
function customPath({ schemaUrn, attribute }: CustomUserAttribute): string {
  return `${schemaUrn}:${attribute.name}`;
}

const isReadOnly = (attr: AttributeDef): boolean => attr.mutability === 'readOnly';

/** A sentence to append when users without the attribute are refused. */
const requiredSuffix = (attr: AttributeDef): string =>
  attr.required ? ' This service requires a value for every user.' : '';

const READ_ONLY_NOTE = 'This service sets this attribute itself (read-only): leave it unmapped.';

// ---------------------------------------------------------------------------------------------
// Okta

/** Okta's Profile Editor data type for a scimd type; dates, references and binaries travel as text. */
const OKTA_TYPES: Record<AttributeType, string> = {
  string: 'string',
  boolean: 'boolean',
  integer: 'integer',
  decimal: 'number',
  dateTime: 'string',
  reference: 'string',
  binary: 'string',
  complex: 'string',
};

function oktaCustomNote(custom: CustomUserAttribute): string {
  const { schemaUrn, attribute: attr } = custom;
  if (isReadOnly(attr)) return READ_ONLY_NOTE;
  if (attr.type === 'complex') {
    if (attr.multiValued) return 'Okta cannot send a multi-valued complex attribute: it stays unmapped.';
    const subs = (attr.subAttributes ?? []).filter((s) => !isReadOnly(s) && !s.multiValued);
    if (subs.length === 0) return 'Okta cannot send this complex attribute: it stays unmapped.';
    const names = subs.map((s) => `${attr.name}.${s.name}`).join(', ');
    return (
      `Okta has no complex data type: in Profile Editor → Add Attribute, add one attribute per part, ` +
      `External name ${names}, External namespace ${schemaUrn}, then map each under Mappings.` +
      requiredSuffix(attr)
    );
  }
  const dataType = `${OKTA_TYPES[attr.type]}${attr.multiValued ? ' array' : ''}`;
  return (
    `In Profile Editor → Add Attribute: Data type ${dataType}, Variable name ${attr.name}, ` +
    `External name ${attr.name}, External namespace ${schemaUrn}; then map it under Mappings.` +
    requiredSuffix(attr)
  );
}

function oktaMappings(input: GuideInput): AttributeMapping[] {
  const ifUnmapped = (from: string): string =>
    `If To App → Attribute Mappings shows it unmapped, map it from ${from}.`;
  return [
    { idpAttribute: 'userName', scimAttribute: 'userName', note: '' },
    { idpAttribute: 'givenName', scimAttribute: 'name.givenName', note: '' },
    { idpAttribute: 'familyName', scimAttribute: 'name.familyName', note: '' },
    { idpAttribute: 'email', scimAttribute: 'emails[type eq "work"].value', note: '' },
    { idpAttribute: 'displayName', scimAttribute: 'displayName', note: ifUnmapped('user.displayName') },
    { idpAttribute: 'title', scimAttribute: 'title', note: ifUnmapped('user.title') },
    {
      idpAttribute: 'department',
      scimAttribute: `${ENTERPRISE_USER}:department`,
      note: ifUnmapped('user.department'),
    },
    {
      idpAttribute: 'employeeNumber',
      scimAttribute: `${ENTERPRISE_USER}:employeeNumber`,
      note: ifUnmapped('user.employeeNumber'),
    },
    {
      idpAttribute: '(user status and assignment)',
      scimAttribute: 'active',
      note: 'Okta sends active false when a user is unassigned or deactivated; it never deletes users.',
    },
    { idpAttribute: '(Okta user id)', scimAttribute: 'externalId', note: 'Okta sends its own user id.' },
    ...input.customAttributes.map((custom) => ({
      idpAttribute: custom.attribute.name,
      scimAttribute: customPath(custom),
      note: oktaCustomNote(custom),
    })),
  ];
}

function oktaGroups(groupSync: boolean): string[] {
  return groupSync
    ? [
        'Group sync is on for this organization: groups are accepted.',
        'Check Push Groups under Provisioning → Integration, then on the Push Groups tab choose ' +
          'Push Groups → Find groups by name, pick each group and Save.',
        'Okta pushes only the members who are assigned to the app, so assign those groups too.',
      ]
    : [
        'Group sync is off for this organization: group requests are refused (403).',
        'Leave Push Groups unchecked and do not push any group from the Push Groups tab.',
        'Assigning a group under Assignments is fine: it provisions its members as users, not the group.',
      ];
}

function oktaGuide(input: GuideInput): IdpGuide {
  const mappable = input.customAttributes.filter((c) => !isReadOnly(c.attribute));
  const steps: GuideStep[] = [
    {
      title: 'Create the app integration',
      text: [
        'In the Okta Admin Console, go to Applications → Applications → Create App Integration and ' +
          'create a SAML 2.0 or SWA integration.',
        'If you already sign in to this service through a SAML or SWA app, open that one instead. ' +
          'OIDC apps cannot use SCIM.',
      ],
    },
    {
      title: 'Turn on SCIM provisioning',
      text: [
        'On the app’s General tab, go to App Settings → Edit, select Enable SCIM provisioning ' +
          '(older consoles: Provisioning → SCIM) and Save.',
        'A Provisioning tab appears.',
      ],
    },
    {
      title: 'Enter the SCIM connection',
      text: [
        'Go to Provisioning → Integration → Edit and fill in these two fields.',
        'Okta finds existing users by userName, which this service compares case-insensitively.',
      ],
      values: [
        { label: 'SCIM connector base URL', value: input.scimBaseUrl },
        { label: 'Unique identifier field for users', value: 'userName' },
      ],
    },
    {
      title: 'Choose the provisioning actions',
      text: [
        'Under Supported provisioning actions, check Push New Users and Push Profile Updates; ' +
          'Import New Users and Profile Updates is optional.',
        input.groupSync
          ? 'Check Push Groups as well: group sync is on for this organization.'
          : 'Leave Push Groups unchecked: group sync is off for this organization.',
      ],
    },
    {
      title: 'Authenticate with a bearer token',
      text: [
        'Set Authentication Mode to HTTP Header and paste the token into Authorization, without the word ' +
          'Bearer: Okta adds it.',
        'Click Test Connector Configuration, close the result and Save.',
      ],
      values: [{ label: 'Authorization (Bearer token)', token: true }],
    },
    {
      title: 'Enable provisioning to the app',
      text: [
        'Go to Provisioning → To App → Edit, enable Create Users, Update User Attributes and ' +
          'Deactivate Users, and Save.',
      ],
    },
  ];
  if (mappable.length > 0) {
    steps.push({
      title: 'Add the custom attributes',
      text: [
        'Under To App → Attribute Mappings, click Go to Profile Editor → Add Attribute for each custom ' +
          'attribute in the table below, with the External name and External namespace it gives.',
        'Then click Mappings, open the tab from Okta User to your app, map each new attribute from an ' +
          'Okta user attribute and Save Mappings.',
      ],
    });
  }
  steps.push({
    title: 'Assign people and groups',
    text: [
      'On the Assignments tab, use Assign → Assign to People or Assign to Groups.',
      'Okta provisions each assigned user right away; unassigning a user deactivates them.',
    ],
  });
  if (input.groupSync) {
    steps.push({
      title: 'Push groups',
      text: [
        'On the Push Groups tab, choose Push Groups → Find groups by name, pick a group and Save; ' +
          'repeat for each group.',
        'Okta pushes only the members who are assigned to the app.',
      ],
    });
  }
  return {
    idp: 'okta',
    title: 'Okta',
    steps,
    uniqueIdentifier: {
      idpAttribute: 'userName',
      scimAttribute: 'userName',
      note:
        'Okta fills userName from the Application username format on the Sign On tab (Okta username by ' +
        'default). Keep it unique per person.',
    },
    mappings: oktaMappings(input),
    groups: oktaGroups(input.groupSync),
    ...oktaRoles(input),
  };
}

/** Okta Identity Governance reads /Roles and /Entitlements, which list only while they have entries. */
function oktaRoles({ catalogue }: GuideInput): { roles?: RolesPart } {
  const kinds = [
    ...(catalogue?.roles.length ? [['Roles', 'Role', '/Roles']] : []),
    ...(catalogue?.entitlements ? [['Entitlements', 'Entitlement', '/Entitlements']] : []),
  ];
  if (kinds.length === 0) return {};
  const each = (value: string) => kinds.map(() => value);
  return {
    roles: {
      title: 'Roles and entitlements (Okta Identity Governance)',
      steps: [
        {
          title: 'Turn on the Governance Engine',
          text: [
            'With Okta Identity Governance, Okta reads this organization’s roles and entitlements and ' +
              'assigns them to people. On the app’s General tab, turn on Governance Engine.',
          ],
        },
        {
          title: 'Add the entitlement settings',
          text: [
            'In the app’s entitlement management settings, add one resource type per column of the table ' +
              'after these steps, with its endpoint and schema mapping, and Save.',
            'Map the ID to value, not id: Okta sends the ID back as the person’s role or entitlement, and ' +
              'that is what this service checks.',
          ],
        },
        {
          title: 'Assign',
          text: [
            'Okta imports the values (it can take a few minutes) and the people with what they hold, ' +
              'then pushes each assignment. A value this organization does not offer is refused, and the ' +
              'connection panel shows it.',
          ],
        },
      ],
      settings: {
        columns: kinds.map(([column]) => column!),
        rows: [
          ['Resource type', ...kinds.map(([, type]) => type!)],
          ['Endpoint', ...kinds.map(([, , endpoint]) => endpoint!)],
          ['Multi-valued', ...each('on')],
          ['Schema mapping: ID', ...each('value')],
          ['Schema mapping: Display Name', ...each('display')],
          ['Schema mapping: Description', ...each('description')],
        ],
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Microsoft Entra ID

/** The Type to pick in Entra's "Edit attribute list" form for a scimd type. */
const ENTRA_TYPES: Record<AttributeType, string> = {
  string: 'String',
  boolean: 'Boolean',
  integer: 'Integer',
  decimal: 'Integer',
  dateTime: 'DateTime',
  reference: 'String',
  binary: 'Binary',
  complex: 'String',
};

/** Entra maps only flat single-valued custom attributes for non-gallery apps. */
const entraCanMap = (attr: AttributeDef): boolean => !attr.multiValued && attr.type !== 'complex';

function entraCustomNote(custom: CustomUserAttribute): string {
  const attr = custom.attribute;
  if (isReadOnly(attr)) return READ_ONLY_NOTE;
  if (!entraCanMap(attr)) {
    return (
      `Entra cannot map this ${attr.multiValued ? 'multi-valued' : 'complex'} attribute: ` +
      'non-gallery apps take only single-valued, flat custom attributes. It stays unset.'
    );
  }
  const decimal =
    attr.type === 'decimal' ? ' Entra has no decimal type, so only whole numbers get through.' : '';
  return (
    `In Edit attribute list, add ${customPath(custom)} (Type ${ENTRA_TYPES[attr.type]}); then Add New ` +
    `Mapping from the Entra attribute that holds it.${decimal}${requiredSuffix(attr)}`
  );
}

function entraMappings(input: GuideInput): AttributeMapping[] {
  return [
    { idpAttribute: 'userPrincipalName', scimAttribute: 'userName', note: '' },
    { idpAttribute: 'givenName', scimAttribute: 'name.givenName', note: '' },
    { idpAttribute: 'surname', scimAttribute: 'name.familyName', note: '' },
    { idpAttribute: 'displayName', scimAttribute: 'displayName', note: '' },
    { idpAttribute: 'mail', scimAttribute: 'emails[type eq "work"].value', note: '' },
    {
      idpAttribute: 'Switch([IsSoftDeleted], , "False", "True", "True", "False")',
      scimAttribute: 'active',
      note: '',
    },
    { idpAttribute: 'mailNickname', scimAttribute: 'externalId', note: '' },
    { idpAttribute: 'jobTitle', scimAttribute: 'title', note: '' },
    { idpAttribute: 'department', scimAttribute: `${ENTERPRISE_USER}:department`, note: '' },
    { idpAttribute: 'employeeId', scimAttribute: `${ENTERPRISE_USER}:employeeNumber`, note: '' },
    { idpAttribute: 'manager', scimAttribute: `${ENTERPRISE_USER}:manager`, note: '' },
    ...input.customAttributes.map((custom) => ({
      idpAttribute: entraCanMap(custom.attribute) && !isReadOnly(custom.attribute) ? '(your choice)' : '—',
      scimAttribute: customPath(custom),
      note: entraCustomNote(custom),
    })),
  ];
}

function entraGroups(groupSync: boolean): string[] {
  return groupSync
    ? [
        'Group sync is on for this organization: groups are accepted.',
        'Keep Provision Microsoft Entra ID Groups enabled under Mappings, and assign the groups under ' +
          'Users and groups.',
        'Entra creates each assigned group here and adds its members that are in scope.',
      ]
    : [
        'Group sync is off for this organization: group requests are refused (403).',
        'Under Mappings, open Provision Microsoft Entra ID Groups, set Enabled to No and Save.',
        'Assigning a group under Users and groups is fine: it provisions its members as users, ' +
          'not the group.',
      ];
}

function entraGuide(input: GuideInput): IdpGuide {
  const separator = input.scimBaseUrl.includes('?') ? '&' : '?';
  const tenantUrl = `${input.scimBaseUrl}${separator}${ENTRA_SCIM_FLAG}`;
  const mappable = input.customAttributes.filter((c) => entraCanMap(c.attribute) && !isReadOnly(c.attribute));
  const steps: GuideStep[] = [
    {
      title: 'Create a non-gallery app',
      text: [
        'In the Microsoft Entra admin center, go to Entra ID → Enterprise apps → New application → ' +
          'Create your own application.',
        'Name it, choose Integrate any other application you don’t find in the gallery (Non-gallery) and ' +
          'click Create.',
      ],
    },
    {
      title: 'Enter the admin credentials',
      text: [
        'In the app, open Provisioning and click New configuration (older screens: Get started, then ' +
          'Provisioning Mode → Automatic → Admin Credentials).',
        `Paste the Tenant URL exactly, including ?${ENTRA_SCIM_FLAG}: it makes Entra send standard ` +
          'SCIM updates.',
      ],
      values: [
        { label: 'Tenant URL', value: tenantUrl },
        { label: 'Secret Token', token: true },
      ],
    },
    {
      title: 'Test the connection',
      text: [
        'Click Test Connection: Entra looks up a made-up userName, and a success message means the URL ' +
          'and token work.',
        'Then click Create (older screens: Save).',
      ],
    },
    {
      title: 'Check the user mappings',
      text: [
        'Under Provisioning → Mappings (or Attribute mapping), open Provision Microsoft Entra ID Users.',
        'Keep userPrincipalName → userName as the matching attribute; the defaults cover the rest of ' +
          'the table below.',
      ],
    },
  ];
  if (mappable.length > 0) {
    steps.push({
      title: 'Add the custom attributes',
      text: [
        'On that page, select Show advanced options → Edit attribute list for your app, add each custom ' +
          'attribute in the table below by its full name and type, and Save.',
        'Back on the mappings page, use Add New Mapping to map an Entra source attribute to each one, ' +
          'then Save.',
      ],
    });
  }
  steps.push(
    input.groupSync
      ? {
          title: 'Keep group provisioning on',
          text: [
            'Under Mappings, check that Provision Microsoft Entra ID Groups is enabled: group sync is on ' +
              'for this organization.',
          ],
        }
      : {
          title: 'Turn group provisioning off',
          text: [
            'Group sync is off for this organization: under Mappings, open Provision Microsoft Entra ID ' +
              'Groups, set Enabled to No and Save.',
          ],
        },
    {
      title: 'Assign users and groups',
      text: [
        'Under Provisioning → Settings, keep Scope on Sync only assigned users and groups.',
        'Then add the people and groups who need access under Users and groups.',
      ],
    },
    {
      title: 'Try one user',
      text: [
        'Open Provision on demand, pick an assigned user and click Provision.',
        'Entra provisions that user at once and shows each step’s result.',
      ],
    },
    {
      title: 'Start provisioning',
      text: [
        'On the Overview page, click Start provisioning.',
        'The first cycle can take a while; after it, Entra syncs changes about every 40 minutes.',
      ],
    },
  );
  return {
    idp: 'entra',
    title: 'Microsoft Entra ID',
    steps,
    uniqueIdentifier: {
      idpAttribute: 'userPrincipalName',
      scimAttribute: 'userName',
      note:
        'Entra matches users by userPrincipalName → userName by default (Match objects using this ' +
        'attribute: Yes). Keep that mapping as the first matching attribute.',
    },
    mappings: entraMappings(input),
    groups: entraGroups(input.groupSync),
    ...entraRoles(input),
  };
}

/** Entra sends app role assignments as the user's roles, by an expression mapping. */
function entraRoles({ catalogue }: GuideInput): { roles?: RolesPart } {
  if (!catalogue?.roles.length) return {};
  return {
    roles: {
      title: 'App roles',
      steps: [
        {
          title: 'Create the app roles',
          text: [
            'In App registrations, open this app → App roles and create one app role for each value ' +
              'below, with Allowed member types Users/Groups and that Value.',
            'Then, in Enterprise apps → this app → Users and groups, assign people or groups to the app roles.',
          ],
          values: catalogue.roles.map((r) => ({ label: r.displayName, value: r.value })),
        },
        {
          title: 'Send the roles',
          text: [
            'Under Provisioning → Mappings → Provision Microsoft Entra ID Users, select Show advanced ' +
              'options → Edit attribute list for your app, add roles if the list lacks it, and Save.',
            'Back on the mappings page, use Add New Mapping: Mapping type Expression, with this expression ' +
              'and target attribute. It must not be a Direct mapping, and it needs Scope Sync only ' +
              'assigned users and groups.',
          ],
          values: [
            { label: 'Expression', value: 'AppRoleAssignmentsComplex([appRoleAssignments])' },
            { label: 'Target attribute', value: 'roles' },
          ],
        },
        {
          title: 'Or replace the whole list',
          text: [
            'With this expression instead, Entra replaces the whole list each time, so a role unassigned ' +
              'in Entra is removed here too.',
          ],
          values: [
            { label: 'Expression', value: 'AssertiveAppRoleAssignmentsComplex([appRoleAssignments])' },
          ],
        },
      ],
    },
  };
}
