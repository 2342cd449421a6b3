import { describe, expect, it } from 'vitest';
import { ScimError } from '../../src/http/scim-errors.js';
import { validateResource } from '../../src/resources/validate.js';
import { resourceTypes } from '../../src/schema/registry.js';
import { ENTERPRISE } from '../helpers/scim.js';

const user = resourceTypes.User;
const create = (body: unknown) => validateResource(user, 'create', body);

function errorOf(fn: () => unknown): ScimError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ScimError) return error;
    throw error;
  }
  throw new Error('expected a ScimError');
}

describe('validateResource (create)', () => {
  it.each([
    ['True', true],
    ['TRUE', true],
    ['false', false],
    ['False', false],
    [true, true],
  ])('coerces active %j to %j', (active, expected) => {
    expect(create({ userName: 'u', active }).active).toBe(expected);
  });

  it('coerces string booleans inside multi-valued attributes', () => {
    const out = create({
      userName: 'u',
      emails: [{ value: 'a@x', primary: 'true' }],
      roles: [{ primary: 'True' }],
    });
    expect(out.emails).toEqual([{ value: 'a@x', primary: true }]);
    expect(out.roles).toEqual([{ primary: true }]);
  });

  it('maps names case-insensitively to the registry spelling and drops unknown ones', () => {
    expect(create({ USERNAME: 'u', Name: { GivenName: 'g', nope: 1 }, whatever: 1 })).toEqual({
      userName: 'u',
      name: { givenName: 'g' },
    });
  });

  it('drops readOnly attributes and null values, keeps writeOnly password for the service to drop', () => {
    expect(
      create({ userName: 'u', id: 'x', meta: {}, groups: [{ value: 'g' }], title: null, password: 'p' }),
    ).toEqual({ userName: 'u', password: 'p' });
  });

  it('gathers extension attributes given nested, URN-prefixed or in another case', () => {
    const out = create({
      userName: 'u',
      [ENTERPRISE.toUpperCase()]: { Department: 'D' },
      [`${ENTERPRISE}:costCenter`]: 'C',
    });
    expect(out[ENTERPRISE]).toEqual({ department: 'D', costCenter: 'C' });
  });

  it('accepts a manager as a bare id, {value}, or a one-element array, and "" as none', () => {
    const manager = (m: unknown) =>
      (create({ userName: 'u', [ENTERPRISE]: { manager: m } })[ENTERPRISE] ?? {}) as Record<string, unknown>;
    expect(manager('m-1').manager).toEqual({ value: 'm-1' });
    expect(manager({ Value: 'm-2' }).manager).toEqual({ value: 'm-2' });
    expect(manager([{ $ref: null, value: 'm-3' }]).manager).toEqual({ value: 'm-3' });
    expect(manager('').manager).toBeUndefined();
    expect(manager({ value: '' }).manager).toBeUndefined();
  });

  it('wraps a single object given for a multi-valued attribute', () => {
    expect(create({ userName: 'u', emails: { value: 'a@x' } }).emails).toEqual([{ value: 'a@x' }]);
  });

  it('drops empty arrays and empty complex values', () => {
    expect(create({ userName: 'u', emails: [], name: {}, roles: [{}] })).toEqual({ userName: 'u' });
  });

  it.each([
    [{}, /userName is required/],
    [{ userName: '' }, /userName/],
    [{ userName: 5 }, /userName/],
    [{ userName: 'u', active: 'yes' }, /active/],
    [{ userName: 'u', emails: [{ value: 'a' }, { value: 7 }] }, /emails\[1\]\.value/],
    [{ userName: 'u', [ENTERPRISE]: { department: 3 } }, /department/],
    [{ userName: 'u', x509Certificates: [{ value: 'not base64!' }] }, /x509Certificates\[0\]\.value/],
  ])('refuses %j with invalidValue', (body, detail) => {
    const error = errorOf(() => create(body));
    expect(error.status).toBe(400);
    expect(error.scimType).toBe('invalidValue');
    expect(error.message).toMatch(detail);
  });

  it.each([null, [], 'x', 3])('refuses a body that is not an object (%j) with invalidSyntax', (body) => {
    expect(errorOf(() => create(body)).scimType).toBe('invalidSyntax');
  });
});

describe('validateResource (response)', () => {
  it('allows readOnly attributes and refuses a missing required one', () => {
    expect(() =>
      validateResource(user, 'response', {
        userName: 'u',
        id: 'i',
        groups: [{ value: 'g', type: 'direct' }],
      }),
    ).not.toThrow();
    expect(() => validateResource(user, 'response', { id: 'i' })).toThrow(/userName/);
  });
});
