// mergePatchOf: which PATCHes become one merge patch of the stored user, and what that patch holds.
import { describe, expect, it } from 'vitest';
import { mergePatchOf } from '../../src/resources/patch.js';
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
