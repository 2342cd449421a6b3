// mergePatchOf and relationOperationsOf: which PATCHes need no read of the stored resource, and what they write.
import { describe, expect, it } from 'vitest';
import { mergePatchOf, relationOperationsOf } from '../../src/resources/patch.js';
import { parsePatchRequest } from '../../src/resources/patch-request.js';
import { resourceTypes } from '../../src/schema/registry.js';
import { ENTERPRISE } from '../helpers/scim.js';

const mergeOf = (Operations: unknown[]) =>
  mergePatchOf(parsePatchRequest({ Operations }), resourceTypes.User, { id: 'u-1' });

describe('mergePatchOf', () => {
  it.each([
    ['Okta deactivation, pathless', [{ op: 'replace', value: { active: false } }], { active: false }],
    [
      'Entra deactivation, a string boolean',
      [{ op: 'Replace', path: 'active', value: 'False' }],
      { active: false },
    ],
    [
      'a sub-attribute',
      [{ op: 'replace', path: 'name.givenName', value: 'Ana' }],
      { name: { givenName: 'Ana' } },
    ],
    [
      'a complex value, merged with what is stored',
      [{ op: 'add', path: 'name', value: { familyName: 'Ruiz' } }],
      { name: { familyName: 'Ruiz' } },
    ],
    [
      'an extension attribute in its URN form',
      [{ op: 'replace', path: `${ENTERPRISE}:department`, value: 'Sales' }],
      { [ENTERPRISE]: { department: 'Sales' } },
    ],
    ['a removal', [{ op: 'remove', path: 'title' }], { title: null }],
    ['a null value, which removes', [{ op: 'replace', path: 'nickName', value: null }], { nickName: null }],
    ['a sub-attribute removal', [{ op: 'remove', path: 'name.givenName' }], { name: { givenName: null } }],
    [
      'Entra removing a manager with ""',
      [{ op: 'replace', path: `${ENTERPRISE}:manager`, value: '' }],
      {
        [ENTERPRISE]: { manager: null },
      },
    ],
    [
      'the same id, repeated by Okta',
      [{ op: 'replace', value: { id: 'u-1', active: true } }],
      { active: true },
    ],
    [
      'a password, which is not stored',
      [{ op: 'replace', path: 'password', value: 'pw' }],
      { password: 'pw' },
    ],
    [
      'operations in order, the last one winning',
      [
        { op: 'replace', path: 'title', value: 'A' },
        { op: 'replace', path: 'title', value: 'B' },
      ],
      { title: 'B' },
    ],
  ])('merges %s', (_, operations, expected) => {
    expect(mergeOf(operations)).toEqual(expected);
  });

  it.each([
    ['an add to a multi-valued attribute', [{ op: 'add', path: 'emails', value: [{ value: 'a@x' }] }]],
    ['a filtered path', [{ op: 'replace', path: 'emails[type eq "work"].value', value: 'a@x' }]],
    ['a removal of a required attribute', [{ op: 'remove', path: 'userName' }]],
    ['a removal of an attribute with a default', [{ op: 'remove', path: 'active' }]],
    [
      'a removal of a whole extension followed by one of its attributes',
      [
        { op: 'remove', path: ENTERPRISE },
        { op: 'add', path: `${ENTERPRISE}:department`, value: 'D' },
      ],
    ],
    [
      'a removal of a complex attribute followed by a sub-attribute',
      [
        { op: 'remove', path: 'name' },
        { op: 'add', path: 'name.givenName', value: 'G' },
      ],
    ],
    ['a value of the wrong type', [{ op: 'replace', path: 'active', value: 'maybe' }]],
    ['an empty list for a single value', [{ op: 'replace', path: 'title', value: [] }]],
    ['a changed id', [{ op: 'replace', value: { id: 'u-2' } }]],
    ['an empty userName', [{ op: 'replace', path: 'userName', value: '' }]],
  ])('leaves %s to the read-and-apply path', (_, operations) => {
    expect(mergeOf(operations)).toBeUndefined();
  });
});

const memberOperationsOf = (Operations: unknown[]) =>
  relationOperationsOf(parsePatchRequest({ Operations }), resourceTypes.Group, {
    id: 'g-1',
    relations: new Set(['members']),
  })?.map((op) => op.op);

describe('relationOperationsOf', () => {
  it.each([
    ['an add of members', [{ op: 'add', path: 'members', value: [{ value: 'u-1' }] }], ['add']],
    ['a removal by filter', [{ op: 'remove', path: 'members[value eq "u-1"]' }], ['remove']],
    [
      "Entra's Remove with a value list",
      [{ op: 'Remove', path: 'members', value: [{ value: 'u-1' }] }],
      ['remove'],
    ],
    ["Okta's pathless replace of the member set", [{ op: 'replace', value: { members: [] } }], ['replace']],
    [
      'the group id repeated, as Okta does',
      [{ op: 'replace', value: { id: 'g-1', members: [] } }],
      ['replace'],
    ],
    ['no operation at all', [], []],
  ])('gives the member operations of %s', (_name, operations, expected) => {
    expect(memberOperationsOf(operations)).toEqual(expected);
  });

  it.each([
    ["Okta's rename beside members", [{ op: 'replace', value: { id: 'g-1', displayName: 'Eng' } }]],
    ['a removal of externalId', [{ op: 'remove', path: 'externalId' }]],
    [
      'members and an attribute',
      [
        { op: 'add', path: 'members', value: [] },
        { op: 'replace', path: 'displayName', value: 'X' },
      ],
    ],
    ['a change of the id', [{ op: 'replace', value: { id: 'g-2' } }]],
    ['a remove without a path', [{ op: 'remove' }]],
  ])('gives nothing for %s: the group must be read', (_name, operations) => {
    expect(memberOperationsOf(operations)).toBeUndefined();
  });
});
