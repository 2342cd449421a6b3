// PATCH /Users/{id} with every shape Okta and Entra send: each row creates a fresh user, PATCHes it,
// reads it back and compares the whole stored user with what the row expects, so a change elsewhere
// in the user is caught too.
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { type Harness, type Tenant, useHarness } from '../helpers/harness.js';
import {
  B,
  HOME,
  type Json,
  MANAGER,
  type Op,
  OTHER,
  patchBody,
  schemasOf,
  stored,
  uniqueName,
  userCalls,
  WORK,
} from '../helpers/patch-users.js';
import { ENTERPRISE, SCIM_JSON, USER } from '../helpers/scim.js';

let harness: Harness;
let t: Tenant;
useHarness(async (h) => {
  harness = h;
  t = await harness.tenant();
});
const { createUser, getUser } = userCalls(() => t);

const pause = (ms = 3) => new Promise((resolve) => setTimeout(resolve, ms));

// Validator test 1's user: every default attribute, `"primary": "true"` as strings.
const V_BODY = {
  externalId: 'v-ext-1',
  name: {
    formatted: 'Garry Kemmer',
    familyName: 'Kemmer',
    givenName: 'Garry',
    middleName: 'Lee',
    honorificPrefix: 'Mr.',
    honorificSuffix: 'III',
  },
  displayName: 'Garry Kemmer',
  nickName: 'Gar',
  profileUrl: 'https://profiles.example/garry',
  title: 'Analyst',
  userType: 'Employee',
  preferredLanguage: 'en-US',
  locale: 'en-US',
  timezone: 'America/Los_Angeles',
  active: true,
  emails: [{ type: 'work', primary: 'true', value: 'garry@kemmer.example' }],
  phoneNumbers: [{ type: 'work', primary: 'true', value: '+1 555 0111' }],
  addresses: [
    {
      type: 'work',
      primary: 'true',
      formatted: '1 Elm St, Boston MA 02101 US',
      streetAddress: '1 Elm St',
      locality: 'Boston',
      region: 'MA',
      postalCode: '02101',
      country: 'US',
    },
  ],
  roles: [{ primary: 'True', display: 'Admin', value: 'admin', type: 'WindowsAzureActiveDirectoryRole' }],
  [ENTERPRISE]: { employeeNumber: '42', department: 'Finance', manager: { value: 'm-1' } },
};
const V = {
  ...V_BODY,
  emails: [{ ...V_BODY.emails[0]!, primary: true }],
  phoneNumbers: [{ ...V_BODY.phoneNumbers[0]!, primary: true }],
  addresses: [{ ...V_BODY.addresses[0]!, primary: true }],
  roles: [{ ...V_BODY.roles[0]!, primary: true }],
};

interface Row {
  name: string;
  /** Attributes to POST (without userName); B when absent. */
  start?: Json;
  /** The stored form of `start` when POST coerces it (string booleans); `start` when absent. */
  startStored?: Json;
  ops: readonly Op[] | ((user: Json) => readonly Op[]);
  /** The whole stored user after the PATCH; userName is the created one unless given. */
  expected: Json;
  /** Extra checks on the user after the PATCH. */
  check?: (user: Json) => Promise<void>;
}

const { [ENTERPRISE]: _ext, ...B_CORE } = B;

const rows: Row[] = [
  // --- disable / enable
  {
    name: 'Entra, no flag: disable with Replace active "False"',
    ops: [{ op: 'Replace', path: 'active', value: 'False' }],
    expected: { ...B, active: false },
  },
  {
    name: 'Entra tutorial: Replace active with boolean false',
    ops: [{ op: 'Replace', path: 'active', value: false }],
    expected: { ...B, active: false },
  },
  {
    name: 'Entra, aadOptscim062020: replace active false',
    ops: [{ op: 'replace', path: 'active', value: false }],
    expected: { ...B, active: false },
  },
  {
    name: 'Okta: pathless replace {active: false}',
    ops: [{ op: 'replace', value: { active: false } }],
    expected: { ...B, active: false },
  },
  {
    name: 'Entra, no flag: enable with Replace active "True"',
    start: { ...B, active: false },
    ops: [{ op: 'Replace', path: 'active', value: 'True' }],
    expected: { ...B, active: true },
  },
  {
    name: 'Entra, flag: enable with replace active true',
    start: { ...B, active: false },
    ops: [{ op: 'replace', path: 'active', value: true }],
    expected: { ...B, active: true },
  },
  {
    name: 'Okta: pathless replace {active: true}',
    start: { ...B, active: false },
    ops: [{ op: 'replace', value: { active: true } }],
    expected: { ...B, active: true },
  },
  // --- Entra attribute updates
  {
    name: 'Entra, no flag: one Replace per attribute',
    ops: [
      { op: 'Replace', path: 'displayName', value: 'Ana Ruiz-Lopez' },
      { op: 'Replace', path: 'emails[type eq "work"].value', value: 'ana.r@corp.example' },
      { op: 'Replace', path: 'name.givenName', value: 'Anita' },
      { op: 'Replace', path: 'name.familyName', value: 'Ruiz-Lopez' },
      { op: 'Replace', path: 'externalId', value: 'ana.r' },
      { op: 'Replace', path: `${ENTERPRISE}:employeeNumber`, value: '7781' },
    ],
    expected: {
      ...B,
      displayName: 'Ana Ruiz-Lopez',
      externalId: 'ana.r',
      name: { ...B.name, givenName: 'Anita', familyName: 'Ruiz-Lopez' },
      emails: [{ ...WORK, value: 'ana.r@corp.example' }],
      [ENTERPRISE]: { department: 'Sales', employeeNumber: '7781' },
    },
  },
  {
    name: 'Entra, flag: filtered op + one pathless replace with dotted and URN-qualified keys',
    ops: [
      { op: 'replace', path: 'emails[type eq "work"].value', value: 'ana.r@corp.example' },
      {
        op: 'replace',
        value: {
          displayName: 'Ana Ruiz-Lopez',
          'name.givenName': 'Anita',
          'name.familyName': 'Ruiz-Lopez',
          externalId: 'ana.r',
          [`${ENTERPRISE}:employeeNumber`]: '7781',
        },
      },
    ],
    expected: {
      ...B,
      displayName: 'Ana Ruiz-Lopez',
      externalId: 'ana.r',
      name: { ...B.name, givenName: 'Anita', familyName: 'Ruiz-Lopez' },
      emails: [{ ...WORK, value: 'ana.r@corp.example' }],
      [ENTERPRISE]: { department: 'Sales', employeeNumber: '7781' },
    },
  },
  {
    // pond/scimitar#123: Entra also sends the merged form with op "add".
    name: 'Entra: pathless add with dotted name keys merges into name',
    ops: [
      {
        op: 'add',
        value: {
          displayName: 'Foo Bar',
          title: 'Bar Foo',
          'name.givenName': 'Foo',
          'name.formatted': 'Foo Bar',
        },
      },
    ],
    expected: {
      ...B,
      displayName: 'Foo Bar',
      title: 'Bar Foo',
      name: { ...B.name, givenName: 'Foo', formatted: 'Foo Bar' },
    },
  },
  {
    name: 'Entra: work email, familyName, work address sub-attributes, Add department',
    ops: [
      { op: 'Replace', path: 'emails[type eq "work"].value', value: 'ana.r@corp.example' },
      { op: 'Replace', path: 'name.familyName', value: 'Ruiz-Lopez' },
      { op: 'Replace', path: 'addresses[type eq "work"].streetAddress', value: '12 Quay St' },
      { op: 'Replace', path: 'addresses[type eq "work"].locality', value: 'Shelbyville' },
      { op: 'Replace', path: 'addresses[type eq "work"].postalCode', value: '22222' },
      { op: 'Add', path: `${ENTERPRISE}:department`, value: 'Retail' },
    ],
    expected: {
      ...B,
      emails: [{ ...WORK, value: 'ana.r@corp.example' }],
      name: { ...B.name, familyName: 'Ruiz-Lopez' },
      addresses: [
        { ...B.addresses[0]!, streetAddress: '12 Quay St', locality: 'Shelbyville', postalCode: '22222' },
      ],
      [ENTERPRISE]: { department: 'Retail', employeeNumber: '100' },
    },
  },
  {
    name: 'Entra: work address sub-attributes create the work address when there is none',
    start: { ...B, addresses: undefined },
    ops: [
      { op: 'Replace', path: 'addresses[type eq "work"].streetAddress', value: '12 Quay St' },
      { op: 'Replace', path: 'addresses[type eq "work"].locality', value: 'Shelbyville' },
      { op: 'Replace', path: 'addresses[type eq "work"].postalCode', value: '22222' },
    ],
    expected: {
      ...B,
      addresses: [
        { type: 'work', streetAddress: '12 Quay St', locality: 'Shelbyville', postalCode: '22222' },
      ],
    },
  },
  {
    name: 'Entra: phoneNumbers[type eq "mobile"].value with no mobile creates it',
    ops: [{ op: 'Replace', path: 'phoneNumbers[type eq "mobile"].value', value: '+1 555 0199' }],
    expected: { ...B, phoneNumbers: [...B.phoneNumbers, { type: 'mobile', value: '+1 555 0199' }] },
  },
  {
    name: 'validator: replace emails[primary eq true].value',
    ops: [{ op: 'replace', path: 'emails[primary eq true].value', value: 'new@corp.example' }],
    expected: { ...B, emails: [{ ...WORK, value: 'new@corp.example' }] },
  },
  {
    name: 'validator: add emails[type eq "home"].value creates a home email and keeps work',
    ops: [{ op: 'add', path: 'emails[type eq "home"].value', value: HOME.value }],
    expected: { ...B, emails: [WORK, HOME] },
  },
  {
    name: 'Entra: Add nickName over an existing value replaces it',
    ops: [{ op: 'Add', path: 'nickName', value: 'Kit' }],
    expected: { ...B, nickName: 'Kit' },
  },
  {
    name: 'Entra: Add nickName when there is none sets it',
    start: { ...B, nickName: undefined },
    ops: [{ op: 'Add', path: 'nickName', value: 'Kit' }],
    expected: { ...B, nickName: 'Kit' },
  },
  {
    name: 'Entra: Add on the enterprise department path',
    ops: [{ op: 'Add', path: `${ENTERPRISE}:department`, value: 'Retail' }],
    expected: { ...B, [ENTERPRISE]: { department: 'Retail', employeeNumber: '100' } },
  },
  {
    name: 'Add on an enterprise attribute of a user without the extension adds the extension',
    start: B_CORE,
    ops: [{ op: 'add', path: `${ENTERPRISE}:department`, value: 'Retail' }],
    expected: { ...B_CORE, [ENTERPRISE]: { department: 'Retail' } },
  },
  {
    name: 'replace on the extension URN merges its attributes',
    ops: [{ op: 'replace', path: ENTERPRISE, value: { department: 'Ops', costCenter: 'C1' } }],
    expected: { ...B, [ENTERPRISE]: { department: 'Ops', employeeNumber: '100', costCenter: 'C1' } },
  },
  {
    name: 'remove on the extension URN removes the extension',
    ops: [{ op: 'remove', path: ENTERPRISE }],
    expected: B_CORE,
  },
  {
    name: 'pathless value with a core-URN-qualified key and a core URN object',
    ops: [{ op: 'replace', value: { [`${USER}:title`]: 'Lead', [USER]: { nickName: 'Annie' } } }],
    expected: { ...B, title: 'Lead', nickName: 'Annie' },
  },
  {
    name: 'attribute names in paths, filters and pathless keys are case-insensitive',
    ops: [
      { op: 'REPLACE', path: 'DisplayName', value: 'X' },
      { op: 'replace', path: 'NAME.GIVENNAME', value: 'Y' },
      { op: 'replace', path: 'Emails[Type eq "work"].Value', value: 'z@corp.example' },
      { op: 'Replace', value: { ExternalId: 'E', 'Name.FamilyName': 'F' } },
    ],
    expected: {
      ...B,
      displayName: 'X',
      externalId: 'E',
      name: { ...B.name, givenName: 'Y', familyName: 'F' },
      emails: [{ ...WORK, value: 'z@corp.example' }],
    },
  },
  // --- validator core tests 6 and 7
  {
    name: 'validator 6: filtered primary paths + one pathless replace of every default attribute',
    start: V_BODY,
    startStored: V,
    ops: [
      { op: 'replace', path: 'emails[primary eq true].value', value: 'garry.k@kemmer.example' },
      { op: 'replace', path: 'phoneNumbers[primary eq true].value', value: '+1 555 0222' },
      { op: 'replace', path: 'addresses[primary eq true].formatted', value: '9 Oak Ave, Austin TX 73301 US' },
      { op: 'replace', path: 'addresses[primary eq true].streetAddress', value: '9 Oak Ave' },
      { op: 'replace', path: 'addresses[primary eq true].locality', value: 'Austin' },
      { op: 'replace', path: 'addresses[primary eq true].region', value: 'TX' },
      { op: 'replace', path: 'addresses[primary eq true].postalCode', value: '73301' },
      { op: 'replace', path: 'addresses[primary eq true].country', value: 'USA' },
      {
        op: 'replace',
        value: {
          externalId: 'v-ext-2',
          'name.formatted': 'Gary Kemer',
          'name.familyName': 'Kemer',
          'name.givenName': 'Gary',
          'name.middleName': 'Leo',
          'name.honorificPrefix': 'Dr.',
          'name.honorificSuffix': 'IV',
          displayName: 'Gary Kemer',
          nickName: 'Gaz',
          profileUrl: 'https://profiles.example/gary',
          title: 'Director',
          userType: 'Contractor',
          preferredLanguage: 'fr-FR',
          locale: 'fr-FR',
          timezone: 'Europe/Paris',
          active: false,
        },
      },
    ],
    expected: {
      ...V,
      externalId: 'v-ext-2',
      name: {
        formatted: 'Gary Kemer',
        familyName: 'Kemer',
        givenName: 'Gary',
        middleName: 'Leo',
        honorificPrefix: 'Dr.',
        honorificSuffix: 'IV',
      },
      displayName: 'Gary Kemer',
      nickName: 'Gaz',
      profileUrl: 'https://profiles.example/gary',
      title: 'Director',
      userType: 'Contractor',
      preferredLanguage: 'fr-FR',
      locale: 'fr-FR',
      timezone: 'Europe/Paris',
      active: false,
      emails: [{ type: 'work', primary: true, value: 'garry.k@kemmer.example' }],
      phoneNumbers: [{ type: 'work', primary: true, value: '+1 555 0222' }],
      addresses: [
        {
          type: 'work',
          primary: true,
          formatted: '9 Oak Ave, Austin TX 73301 US',
          streetAddress: '9 Oak Ave',
          locality: 'Austin',
          region: 'TX',
          postalCode: '73301',
          country: 'USA',
        },
      ],
    },
  },
  {
    name: 'validator 7: pathless replace of userName',
    ops: [{ op: 'replace', value: { userName: 'renamed-v7@corp.example' } }],
    expected: { ...B, userName: 'renamed-v7@corp.example' },
  },
  // --- manager
  {
    name: 'validator 9: add manager as a raw string id',
    ops: [{ op: 'add', path: MANAGER, value: 'm-42' }],
    expected: { ...B, [ENTERPRISE]: { ...B[ENTERPRISE], manager: { value: 'm-42' } } },
  },
  {
    name: 'validator 10: replace manager with another id',
    start: { ...B, [ENTERPRISE]: { ...B[ENTERPRISE], manager: { value: 'm-42' } } },
    ops: [{ op: 'replace', path: MANAGER, value: 'm-77' }],
    expected: { ...B, [ENTERPRISE]: { ...B[ENTERPRISE], manager: { value: 'm-77' } } },
  },
  {
    name: 'validator 11: replace manager with "" removes it',
    start: { ...B, [ENTERPRISE]: { ...B[ENTERPRISE], manager: { value: 'm-42' } } },
    ops: [{ op: 'replace', path: MANAGER, value: '' }],
    expected: B,
  },
  {
    name: 'replace manager with {value: ""} removes it',
    start: { ...B, [ENTERPRISE]: { ...B[ENTERPRISE], manager: { value: 'm-42' } } },
    ops: [{ op: 'replace', path: MANAGER, value: { value: '' } }],
    expected: B,
  },
  {
    name: 'replace manager with null removes it',
    start: { ...B, [ENTERPRISE]: { ...B[ENTERPRISE], manager: { value: 'm-42' } } },
    ops: [{ op: 'replace', path: MANAGER, value: null }],
    expected: B,
  },
  {
    name: 'remove manager',
    start: { ...B, [ENTERPRISE]: { ...B[ENTERPRISE], manager: { value: 'm-42' } } },
    ops: [{ op: 'remove', path: MANAGER }],
    expected: B,
  },
  {
    name: 'removing the only enterprise attribute removes the extension and its schema URN',
    start: { ...B_CORE, [ENTERPRISE]: { manager: { value: 'm-42' } } },
    ops: [{ op: 'Replace', path: MANAGER, value: '' }],
    expected: B_CORE,
  },
  {
    name: 'legacy tutorial: Add on the bare path "manager" with [{$ref, value}]',
    ops: [{ op: 'Add', path: 'manager', value: [{ $ref: 'https://h/scim/Users/m-1', value: 'm-1' }] }],
    expected: {
      ...B,
      [ENTERPRISE]: { ...B[ENTERPRISE], manager: { $ref: 'https://h/scim/Users/m-1', value: 'm-1' } },
    },
  },
  {
    name: 'replace manager with {value: id}',
    ops: [{ op: 'replace', path: MANAGER, value: { value: 'm-9' } }],
    expected: { ...B, [ENTERPRISE]: { ...B[ENTERPRISE], manager: { value: 'm-9' } } },
  },
  // --- validator preview tests
  {
    name: 'preview: multiple operations on different attributes',
    ops: [
      { op: 'remove', path: 'nickName' },
      { op: 'add', value: { externalId: 'N-1' } },
      { op: 'replace', value: { displayName: 'D-1' } },
    ],
    expected: { ...B, nickName: undefined, externalId: 'N-1', displayName: 'D-1' },
  },
  {
    name: 'preview: multiple operations on the same attribute apply in order',
    ops: [
      { op: 'remove', path: 'externalId' },
      { op: 'add', value: { externalId: 'A' } },
      { op: 'replace', value: { externalId: 'B' } },
    ],
    expected: { ...B, externalId: 'B' },
  },
  // --- Okta
  {
    name: "Okta: pathless replace repeating the user's own id (ignored)",
    ops: (user) => [{ op: 'replace', value: { id: user.id, active: false } }],
    expected: { ...B, active: false },
  },
  {
    name: 'Okta: password in a pathless replace and on a path is accepted, never stored',
    ops: [
      { op: 'replace', value: { password: 'Okta-Sync-Secret-1!' } },
      { op: 'replace', path: 'password', value: 'Okta-Sync-Secret-2!' },
    ],
    expected: B,
    check: async (user) => {
      const row = await harness.database.db
        .selectFrom('users')
        .select('data')
        .where('id', '=', String(user.id))
        .executeTakeFirstOrThrow();
      expect(JSON.stringify(row.data)).not.toContain('Okta-Sync-Secret');
      expect(JSON.stringify(user)).not.toContain('Okta-Sync-Secret');
    },
  },
  {
    name: 'Okta: groups, meta and unknown keys in a pathless value are ignored',
    ops: [
      {
        op: 'replace',
        value: {
          displayName: 'Kim',
          groups: [{ value: 'g-1', display: 'Eng' }],
          meta: { created: '2000-01-01T00:00:00Z', resourceType: 'Group' },
          favoriteColor: 'blue',
        },
      },
    ],
    expected: { ...B, displayName: 'Kim' },
  },
  {
    name: 'Okta: a PUT-like pathless replace with the whole user (id, meta, groups, password)',
    ops: (user) => [
      {
        op: 'replace',
        value: {
          schemas: [USER],
          id: user.id,
          userName: user.userName,
          name: { givenName: 'Kim', familyName: 'Lee' },
          emails: [{ primary: true, value: 'kim@corp.example', type: 'work' }],
          displayName: 'Kim Lee',
          locale: 'en-US',
          externalId: '00u1abcd',
          groups: [],
          password: 'Okta-Put-Secret',
          active: false,
          meta: user.meta,
        },
      },
    ],
    // RFC 7644 §3.5.2.3: a complex value merges (name.formatted stays); a multi-valued one is replaced.
    expected: {
      ...B,
      name: { formatted: 'Ana Ruiz', givenName: 'Kim', familyName: 'Lee' },
      emails: [{ primary: true, value: 'kim@corp.example', type: 'work' }],
      displayName: 'Kim Lee',
      locale: 'en-US',
      externalId: '00u1abcd',
      active: false,
    },
  },
  // --- primary (RFC 7643 §2.4)
  {
    name: 'setting primary on the home email clears it on the work email',
    start: { ...B, emails: [WORK, HOME] },
    ops: [{ op: 'replace', path: 'emails[type eq "home"].primary', value: true }],
    expected: {
      ...B,
      emails: [
        { type: 'work', value: WORK.value },
        { ...HOME, primary: true },
      ],
    },
  },
  {
    name: 'adding an email with primary "true" clears it on the others',
    start: { ...B, emails: [WORK, HOME] },
    ops: [{ op: 'add', path: 'emails', value: [{ ...OTHER, primary: 'true' }] }],
    expected: {
      ...B,
      emails: [{ type: 'work', value: WORK.value }, HOME, { ...OTHER, primary: true }],
    },
  },
  {
    name: 'adding an email that is already there does not duplicate it',
    start: { ...B, emails: [WORK, HOME] },
    ops: [{ op: 'add', path: 'emails', value: [HOME] }],
    expected: { ...B, emails: [WORK, HOME] },
  },
  {
    // README: "an element already there is not added twice"; the validator sends "primary":"true".
    name: 'adding an email that is already there, with primary as the string "true", does not duplicate it',
    ops: [{ op: 'add', path: 'emails', value: [{ ...WORK, primary: 'true' }] }],
    expected: B,
  },
  {
    name: 'replace on emails replaces the whole list',
    start: { ...B, emails: [WORK, HOME] },
    ops: [{ op: 'replace', path: 'emails', value: [OTHER] }],
    expected: { ...B, emails: [OTHER] },
  },
  // --- remove (RFC 7644 §3.5.2.2, pitfalls 5, 11)
  {
    name: 'Entra: Remove on emails with a value list removes only the listed emails',
    start: { ...B, emails: [WORK, HOME, OTHER] },
    ops: [{ op: 'Remove', path: 'emails', value: [{ value: HOME.value }, { value: OTHER.value }] }],
    expected: { ...B, emails: [WORK] },
  },
  {
    name: 'remove emails[type eq "work"] removes only the work email',
    start: { ...B, emails: [WORK, HOME, OTHER] },
    ops: [{ op: 'remove', path: 'emails[type eq "work"]' }],
    expected: { ...B, emails: [HOME, OTHER] },
  },
  {
    name: 'remove on a filtered sub-attribute with a value removes it and does not set the value',
    ops: [{ op: 'remove', path: 'addresses[type eq "work"].locality', value: 'Elsewhere' }],
    expected: { ...B, addresses: [{ ...B.addresses[0]!, locality: undefined }] },
  },
  {
    name: 'remove a sub-attribute of name',
    ops: [{ op: 'remove', path: 'name.formatted' }],
    expected: { ...B, name: { familyName: 'Ruiz', givenName: 'Ana' } },
  },
  {
    name: 'remove on an attribute that is not there changes nothing',
    start: { ...B, nickName: undefined },
    ops: [{ op: 'remove', path: 'nickName' }],
    expected: { ...B, nickName: undefined },
  },
  // --- SCIM_Null_Update: "" and null on optional attributes
  {
    name: 'replace with null removes a single-valued attribute',
    ops: [
      { op: 'replace', path: 'title', value: null },
      { op: 'replace', value: { nickName: null } },
    ],
    expected: { ...B, title: undefined, nickName: undefined },
  },
  // --- requests that change nothing
  {
    name: 'empty Operations changes nothing',
    ops: [],
    expected: B,
  },
  {
    name: 'a replace with the value already there changes nothing (meta.lastModified stays)',
    ops: [
      { op: 'replace', path: 'displayName', value: B.displayName },
      { op: 'Replace', path: 'active', value: 'True' },
    ],
    expected: B,
  },
];

describe('PATCH /Users/{id}: the shapes Okta and Entra send', () => {
  it.each(rows)('$name', async (row) => {
    const userName = uniqueName();
    const start = row.start ?? B;
    const created = await createUser({ userName, ...start });
    expect(stored(created)).toEqual({ userName, ...(row.startStored ?? start) });
    await pause();
    const ops = typeof row.ops === 'function' ? row.ops(created) : row.ops;

    const res = await t.patch(`/Users/${created.id}`, patchBody(ops));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.headers['content-type']).toBe(SCIM_JSON);
    const after = await getUser(created.id);
    expect(res.body).toEqual(after);

    const want = { userName, ...row.expected };
    expect(stored(after)).toEqual(want);
    expect(after.id).toBe(created.id);
    expect(after.schemas).toEqual(schemasOf(want));
    const createdMeta = created.meta as Json;
    const afterMeta = after.meta as Json;
    expect(afterMeta.created).toBe(createdMeta.created);
    expect(afterMeta.location).toBe(createdMeta.location);
    if (isDeepStrictEqual(stored(after), stored(created))) {
      expect(afterMeta.lastModified).toBe(createdMeta.lastModified);
    } else {
      expect(String(afterMeta.lastModified) > String(createdMeta.lastModified)).toBe(true);
    }
    await row.check?.(after);
  });

  it('validator 8: a disabled user still shows active false on GET and on a userName filter', async () => {
    const userName = uniqueName('v8');
    const created = await createUser({ userName, ...B });
    await t
      .patch(`/Users/${created.id}`, patchBody([{ op: 'replace', path: 'active', value: false }]))
      .expect(200);
    expect((await getUser(created.id)).active).toBe(false);
    for (const query of [
      `filter=${encodeURIComponent(`userName eq "${userName}"`)}`,
      // Entra's encoding: + for spaces, %40 for @.
      `filter=userName+eq+%22${userName.replace('@', '%40')}%22`,
    ]) {
      const list = (await t.get(`/Users?${query}`).expect(200)).body;
      expect(list.totalResults).toBe(1);
      expect(list.Resources[0]).toMatchObject({ id: created.id, userName, active: false });
    }
    const inactive = (
      await t.get(`/Users?filter=${encodeURIComponent(`userName eq "${userName}" and active eq false`)}`)
    ).body;
    expect(inactive.totalResults).toBe(1);
  });

  it('moves meta.lastModified on a real change only, and keeps meta.created', async () => {
    const created = await createUser({ userName: uniqueName(), ...B });
    await pause(5);
    const empty = await t.patch(`/Users/${created.id}`, patchBody([])).expect(200);
    expect(empty.body).toEqual(created);
    const same = await t
      .patch(`/Users/${created.id}`, patchBody([{ op: 'replace', path: 'title', value: B.title }]))
      .expect(200);
    expect(same.body).toEqual(created);
    const changed = await t
      .patch(`/Users/${created.id}`, patchBody([{ op: 'replace', path: 'title', value: 'Boss' }]))
      .expect(200);
    const meta = changed.body.meta as Json;
    const before = created.meta as Json;
    expect(meta.created).toBe(before.created);
    expect(String(meta.lastModified) > String(before.lastModified)).toBe(true);
  });

  it('accepts exactly 1000 operations', async () => {
    const created = await createUser({ userName: uniqueName(), ...B });
    const ops = Array.from({ length: 1000 }, (_, i) => ({ op: 'replace', path: 'title', value: `T${i}` }));
    await t.patch(`/Users/${created.id}`, patchBody(ops)).expect(200);
    expect((await getUser(created.id)).title).toBe('T999');
  });

  it('serialises concurrent PATCHes on one user: none is lost', async () => {
    const created = await createUser({ userName: uniqueName(), ...B_CORE, emails: undefined });
    const values = Array.from({ length: 12 }, (_, i) => `c${i}@corp.example`);
    const results = await Promise.all(
      values.map((value) =>
        t.patch(`/Users/${created.id}`, patchBody([{ op: 'add', path: 'emails', value: [{ value }] }])),
      ),
    );
    for (const res of results) expect(res.status).toBe(200);
    const emails = (await getUser(created.id)).emails as { value: string }[];
    expect(emails.map((e) => e.value).sort()).toEqual([...values].sort());
  });
});

describe('PATCH /Users/{id}: a value filter with a complex value, and attributes with a default', () => {
  it('replace emails[type eq "home"] with {value} sets the value and keeps the type and primary (RFC 7644 §3.5.2.3)', async () => {
    const user = await createUser({ userName: uniqueName(), emails: [WORK, { ...HOME, primary: false }] });
    await t
      .patch(
        `/Users/${user.id}`,
        patchBody([{ op: 'replace', path: 'emails[type eq "home"]', value: { value: 'new@home.example' } }]),
      )
      .expect(200);
    expect((await getUser(user.id)).emails).toEqual([
      WORK,
      { type: 'home', value: 'new@home.example', primary: false },
    ]);
  });

  it('replace emails[primary eq false] with {display} keeps each matched email its value', async () => {
    const user = await createUser({
      userName: uniqueName(),
      emails: [WORK, { ...HOME, primary: false }, { ...OTHER, primary: false }],
    });
    await t
      .patch(
        `/Users/${user.id}`,
        patchBody([{ op: 'replace', path: 'emails[primary eq false]', value: { display: 'post' } }]),
      )
      .expect(200);
    const emails = (await getUser(user.id)).emails as Json[];
    expect(emails).toEqual([
      WORK,
      { ...HOME, primary: false, display: 'post' },
      { ...OTHER, primary: false, display: 'post' },
    ]);
  });

  it.each([
    ['remove active', [{ op: 'remove', path: 'active' }]],
    ['replace active with null', [{ op: 'replace', path: 'active', value: null }]],
    ['a pathless replace of active with null', [{ op: 'replace', value: { active: null } }]],
  ])('%s is 400 invalidValue saying why, and the user keeps active false', async (_, ops) => {
    const user = await createUser({ userName: uniqueName(), active: false });
    const res = await t.patch(`/Users/${user.id}`, patchBody(ops));
    expect(res.status).toBe(400);
    expect(res.body.scimType).toBe('invalidValue');
    expect(res.body.detail).toMatch(/active cannot be removed: it is true unless set/);
    expect((await getUser(user.id)).active).toBe(false);
  });
});
