import { describe, expect, it } from 'vitest';
import {
  type CustomUserAttribute,
  type GuideInput,
  type GuideValue,
  IDPS,
  type IdpGuide,
  idpGuide,
  isIdpName,
} from '../../src/console/idp-guides.js';
import type { AttributeDef } from '../../src/schema/types.js';

const BASE = 'https://scim.example.com/scim/v2/org_42';
const ACME = 'urn:ietf:params:scim:schemas:extension:acme:2.0:User';

function attr(name: string, overrides: Partial<AttributeDef> = {}): AttributeDef {
  return {
    name,
    type: 'string',
    multiValued: false,
    description: '',
    required: false,
    caseExact: false,
    mutability: 'readWrite',
    returned: 'default',
    uniqueness: 'none',
    ...overrides,
  };
}

const costCenter: CustomUserAttribute = { schemaUrn: ACME, attribute: attr('costCenter') };
const badges: CustomUserAttribute = { schemaUrn: ACME, attribute: attr('badges', { multiValued: true }) };
const office: CustomUserAttribute = {
  schemaUrn: ACME,
  attribute: attr('office', {
    type: 'complex',
    subAttributes: [attr('building'), attr('floor', { type: 'integer' })],
  }),
};

function input(overrides: Partial<GuideInput> = {}): GuideInput {
  return { scimBaseUrl: BASE, groupSync: false, customAttributes: [], ...overrides };
}

const allValues = (guide: IdpGuide): GuideValue[] => guide.steps.flatMap((s) => s.values ?? []);
const copyValue = (guide: IdpGuide, label: string): string | undefined => {
  const found = allValues(guide).find((v) => v.label === label);
  return found && 'value' in found ? found.value : undefined;
};
const tokens = (guide: IdpGuide) => allValues(guide).filter((v) => 'token' in v);
const allText = (guide: IdpGuide): string =>
  [...guide.steps.flatMap((s) => [s.title, ...s.text]), ...guide.groups].join('\n');
const mappingOf = (guide: IdpGuide, scimAttribute: string) =>
  guide.mappings.find((m) => m.scimAttribute === scimAttribute);

describe('idpGuide', () => {
  it('gives Okta the base URL as the SCIM connector base URL, and userName as the unique identifier', () => {
    const guide = idpGuide('okta', input());
    expect(guide.title).toBe('Okta');
    expect(copyValue(guide, 'SCIM connector base URL')).toBe(BASE);
    expect(copyValue(guide, 'Unique identifier field for users')).toBe('userName');
    expect(guide.uniqueIdentifier.scimAttribute).toBe('userName');
    expect(guide.uniqueIdentifier.idpAttribute).toBe('userName');
  });

  it('gives Entra the base URL with the PATCH compliance flag as the Tenant URL', () => {
    const guide = idpGuide('entra', input());
    expect(guide.title).toBe('Microsoft Entra ID');
    expect(copyValue(guide, 'Tenant URL')).toBe(`${BASE}?aadOptscim062020`);
    expect(guide.uniqueIdentifier).toMatchObject({
      idpAttribute: 'userPrincipalName',
      scimAttribute: 'userName',
    });
    expect(mappingOf(guide, 'externalId')?.idpAttribute).toBe('mailNickname');
  });

  it('offers exactly one token, under the label each IdP uses', () => {
    expect(tokens(idpGuide('okta', input()))).toEqual([
      { label: 'Authorization (Bearer token)', token: true },
    ]);
    expect(tokens(idpGuide('entra', input()))).toEqual([{ label: 'Secret Token', token: true }]);
  });

  it('maps the core attributes in both guides', () => {
    for (const idp of IDPS) {
      const mapped = idpGuide(idp, input()).mappings.map((m) => m.scimAttribute);
      expect(mapped).toEqual(
        expect.arrayContaining([
          'userName',
          'name.givenName',
          'name.familyName',
          'displayName',
          'emails[type eq "work"].value',
          'active',
          'externalId',
        ]),
      );
    }
  });

  it('never names scimd: the IT admin reads the guide under the operator’s brand', () => {
    const required = { schemaUrn: ACME, attribute: attr('region', { required: true }) };
    const readOnly = { schemaUrn: ACME, attribute: attr('badge', { mutability: 'readOnly' }) };
    for (const idp of IDPS) {
      for (const groupSync of [false, true]) {
        const guide = idpGuide(
          idp,
          input({ groupSync, customAttributes: [required, readOnly, badges, office] }),
        );
        const mappings = guide.mappings.flatMap((m) => [m.idpAttribute, m.note]);
        const everything = [allText(guide), guide.uniqueIdentifier.note, ...mappings].join('\n');
        expect(everything).not.toMatch(/scimd/i);
      }
    }
  });

  it('keeps every step short and free of markup', () => {
    for (const idp of IDPS) {
      for (const groupSync of [false, true]) {
        const guide = idpGuide(idp, input({ groupSync, customAttributes: [costCenter] }));
        expect(guide.steps.length).toBeGreaterThanOrEqual(6);
        expect(guide.steps.length).toBeLessThanOrEqual(9);
        for (const step of guide.steps) {
          expect(step.text.length).toBeGreaterThanOrEqual(1);
          expect(step.text.length).toBeLessThanOrEqual(3);
          for (const paragraph of step.text) expect(paragraph).not.toMatch(/[<>]/);
        }
      }
    }
  });

  it('names a custom string attribute with its URN in both guides', () => {
    const okta = mappingOf(idpGuide('okta', input({ customAttributes: [costCenter] })), `${ACME}:costCenter`);
    expect(okta?.idpAttribute).toBe('costCenter');
    expect(okta?.note).toContain('External name costCenter');
    expect(okta?.note).toContain(`External namespace ${ACME}`);

    const entra = mappingOf(
      idpGuide('entra', input({ customAttributes: [costCenter] })),
      `${ACME}:costCenter`,
    );
    expect(entra?.note).toContain(`${ACME}:costCenter`);
    expect(entra?.note).not.toMatch(/cannot/);
  });

  it('adds a custom-attribute step only when the organization has custom attributes', () => {
    for (const idp of IDPS) {
      const titles = (g: IdpGuide) => g.steps.map((s) => s.title);
      expect(titles(idpGuide(idp, input()))).not.toContain('Add the custom attributes');
      expect(titles(idpGuide(idp, input({ customAttributes: [costCenter] })))).toContain(
        'Add the custom attributes',
      );
    }
  });

  it('tells Entra admins that multi-valued and complex custom attributes cannot be mapped', () => {
    const guide = idpGuide('entra', input({ customAttributes: [costCenter, badges, office] }));
    expect(mappingOf(guide, `${ACME}:badges`)?.note).toMatch(/Entra cannot map this multi-valued attribute/);
    expect(mappingOf(guide, `${ACME}:office`)?.note).toMatch(/Entra cannot map this complex attribute/);
    // Only unmappable ones: no step to add them.
    const onlyUnmappable = idpGuide('entra', input({ customAttributes: [badges] }));
    expect(onlyUnmappable.steps.map((s) => s.title)).not.toContain('Add the custom attributes');
  });

  it('gives Okta one External name per part of a complex custom attribute', () => {
    const note = mappingOf(idpGuide('okta', input({ customAttributes: [office] })), `${ACME}:office`)?.note;
    expect(note).toContain('office.building, office.floor');
    expect(note).toContain(`External namespace ${ACME}`);
  });

  it('tells the admin not to provision groups while group sync is off', () => {
    const okta = idpGuide('okta', input({ groupSync: false }));
    expect(okta.groups.join('\n')).toMatch(/Group sync is off/);
    expect(okta.groups.join('\n')).toMatch(/Leave Push Groups unchecked/);
    expect(allText(okta)).toMatch(/Leave Push Groups unchecked/);
    expect(okta.steps.map((s) => s.title)).not.toContain('Push groups');

    const entra = idpGuide('entra', input({ groupSync: false }));
    expect(entra.groups.join('\n')).toMatch(/Group sync is off/);
    expect(entra.groups.join('\n')).toMatch(/Provision Microsoft Entra ID Groups, set Enabled to No/);
    expect(entra.steps.map((s) => s.title)).toContain('Turn group provisioning off');
  });

  it('tells the admin to push groups while group sync is on', () => {
    const okta = idpGuide('okta', input({ groupSync: true }));
    expect(okta.groups.join('\n')).toMatch(/Check Push Groups/);
    expect(okta.steps.map((s) => s.title)).toContain('Push groups');
    expect(allText(okta)).not.toMatch(/Leave Push Groups unchecked/);

    const entra = idpGuide('entra', input({ groupSync: true }));
    expect(entra.groups.join('\n')).toMatch(/Keep Provision Microsoft Entra ID Groups enabled/);
    expect(allText(entra)).not.toMatch(/Enabled to No/);
  });
});

describe('idpGuide: roles and entitlements', () => {
  const catalogue = {
    roles: [
      { value: 'admin', displayName: 'Administrator' },
      { value: 'viewer', displayName: 'Viewer' },
    ],
    entitlements: true,
  };
  const rolesText = (guide: IdpGuide) =>
    (guide.roles?.steps ?? [])
      .flatMap((s) => [s.title, ...s.text, ...(s.values ?? []).map((v) => ('value' in v ? v.value : ''))])
      .join('\n');

  it('has no roles part while the catalogue is empty', () => {
    for (const idp of IDPS) {
      expect(idpGuide(idp, input()).roles).toBeUndefined();
      expect(idpGuide(idp, input({ catalogue: { roles: [], entitlements: false } })).roles).toBeUndefined();
    }
    // Entra sends app roles only: entitlements alone give it nothing to do.
    expect(idpGuide('entra', input({ catalogue: { roles: [], entitlements: true } })).roles).toBeUndefined();
  });

  it('gives Okta Identity Governance its settings: resource types, endpoints, ID value, display name display', () => {
    const roles = idpGuide('okta', input({ catalogue })).roles!;
    expect(roles.settings).toEqual({
      columns: ['Roles', 'Entitlements'],
      rows: [
        ['Resource type', 'Role', 'Entitlement'],
        ['Endpoint', '/Roles', '/Entitlements'],
        ['Multi-valued', 'on', 'on'],
        ['Schema mapping: ID', 'value', 'value'],
        ['Schema mapping: Display Name', 'display', 'display'],
        ['Schema mapping: Description', 'description', 'description'],
      ],
    });
    expect(rolesText(idpGuide('okta', input({ catalogue })))).toMatch(/Governance Engine/);
    const onlyRoles = idpGuide('okta', input({ catalogue: { ...catalogue, entitlements: false } })).roles!;
    expect(onlyRoles.settings?.columns).toEqual(['Roles']);
  });

  it('gives Entra the app roles to create and the roles mapping to AppRoleAssignmentsComplex', () => {
    const guide = idpGuide('entra', input({ catalogue }));
    const values = (guide.roles?.steps ?? []).flatMap((s) => s.values ?? []);
    expect(values).toEqual(
      expect.arrayContaining([
        { label: 'Administrator', value: 'admin' },
        { label: 'Viewer', value: 'viewer' },
        { label: 'Expression', value: 'AppRoleAssignmentsComplex([appRoleAssignments])' },
        { label: 'Target attribute', value: 'roles' },
        { label: 'Expression', value: 'AssertiveAppRoleAssignmentsComplex([appRoleAssignments])' },
      ]),
    );
    for (const idp of IDPS) expect(rolesText(idpGuide(idp, input({ catalogue })))).not.toMatch(/scimd/i);
  });
});

describe('isIdpName', () => {
  it.each(['okta', 'entra'])('accepts %s', (name) => {
    expect(isIdpName(name)).toBe(true);
  });

  it.each(['', 'Okta', 'azure', 'onelogin', 'toString'])('rejects %j', (name) => {
    expect(isIdpName(name)).toBe(false);
  });
});
