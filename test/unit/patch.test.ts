// applyPatch is pure: operations over stored attributes, no database.
import { describe, expect, it } from 'vitest';
import { applyPatch } from '../../src/resources/patch.js';
import { parsePatchRequest } from '../../src/resources/patch-request.js';
import { resourceTypes } from '../../src/schema/registry.js';
import { ENTERPRISE } from '../helpers/scim.js';

const base = {
  userName: 'ana',
  active: true,
  emails: [
    { type: 'work', value: 'w@x', primary: true },
    { type: 'home', value: 'h@x' },
  ],
  [ENTERPRISE]: { department: 'D' },
};

function patch(attributes: Record<string, unknown>, Operations: unknown[], relations?: Set<string>) {
  return applyPatch(attributes, parsePatchRequest({ Operations }), resourceTypes.User, {
    id: 'u-1',
    ...(relations ? { relations } : {}),
  });
}

describe('applyPatch', () => {
  it('does not touch its input', () => {
    const input = structuredClone(base);
    patch(input, [{ op: 'remove', path: 'emails' }]);
    expect(input).toEqual(base);
  });

  it('applies operations in order', () => {
    const out = patch(base, [
      { op: 'remove', path: 'externalId' },
      { op: 'add', value: { externalId: 'A' } },
      { op: 'replace', value: { externalId: 'B' } },
    ]);
    expect(out.attributes.externalId).toBe('B');
  });

  it('replaces a value-filtered sub-attribute on the matching element only', () => {
    const out = patch(base, [{ op: 'replace', path: 'emails[type eq "home"].value', value: 'h2@x' }]);
    expect(out.attributes.emails).toEqual([
      { type: 'work', value: 'w@x', primary: true },
      { type: 'home', value: 'h2@x' },
    ]);
  });

  it('creates the element a filtered replace does not find, and moves primary to it', () => {
    const out = patch(base, [
      { op: 'replace', path: 'emails[type eq "other"].value', value: 'o@x' },
      { op: 'replace', path: 'emails[type eq "other"].primary', value: 'True' },
    ]);
    expect(out.attributes.emails).toEqual([
      { type: 'work', value: 'w@x' },
      { type: 'home', value: 'h@x' },
      { type: 'other', value: 'o@x', primary: true },
    ]);
  });

  it('refuses to create from a filter that is not a conjunction of equalities (noTarget)', () => {
    expect(() => patch(base, [{ op: 'replace', path: 'emails[value co "zz"].type', value: 'x' }])).toThrow(
      expect.objectContaining({ scimType: 'noTarget', message: expect.stringMatching(/^Operations\[0\]/) }),
    );
  });

  it('merges into a complex attribute and into the extension', () => {
    const out = patch({ ...base, name: { givenName: 'A', familyName: 'R' } }, [
      { op: 'replace', path: 'name', value: { givenName: 'B' } },
      { op: 'add', path: ENTERPRISE, value: { costCenter: 'C' } },
    ]);
    expect(out.attributes.name).toEqual({ givenName: 'B', familyName: 'R' });
    expect(out.attributes[ENTERPRISE]).toEqual({ department: 'D', costCenter: 'C' });
  });

  it('hands operations on relation-backed attributes back, unapplied', () => {
    const out = patch(
      base,
      [{ op: 'Remove', path: 'emails', value: [{ value: 'w@x' }] }],
      new Set(['emails']),
    );
    expect(out.attributes.emails).toEqual(base.emails);
    expect(out.deferred).toMatchObject([
      { op: 'remove', attribute: { name: 'emails' }, value: [{ value: 'w@x' }] },
    ]);
  });

  it.each([
    [[{ op: 'remove' }], 'noTarget'],
    [[{ op: 'add', path: 'bogus', value: 1 }], 'invalidPath'],
    [[{ op: 'replace', path: 'id', value: 'other' }], 'mutability'],
    [[{ op: 'replace', path: 'active', value: 'maybe' }], 'invalidValue'],
    [[{ op: 'remove', path: 'userName' }], 'invalidValue'],
    [[{ op: 'add', value: 'not an object' }], 'invalidValue'],
  ])('refuses %j with %s', (Operations, scimType) => {
    expect(() => patch(base, Operations)).toThrow(expect.objectContaining({ status: 400, scimType }));
  });
});
