import { describe, expect, it } from 'vitest';
import { derivedOncePerName, resolveAttributePath, resourceTypes } from '../../src/schema/registry.js';
import { ENTERPRISE, USER } from '../helpers/scim.js';

describe('resolveAttributePath', () => {
  const user = resourceTypes.User;

  it.each([
    ['userName', USER, 'userName', undefined],
    ['USERNAME', USER, 'userName', undefined],
    ['name.FamilyName', USER, 'name', 'familyName'],
    [`${USER}:userName`, USER, 'userName', undefined],
    [`${USER.toUpperCase()}:emails.value`, USER, 'emails', 'value'],
    [`${ENTERPRISE}:employeeNumber`, ENTERPRISE, 'employeeNumber', undefined],
    [`${ENTERPRISE}:manager.value`, ENTERPRISE, 'manager', 'value'],
    ['id', undefined, 'id', undefined],
    ['meta.lastModified', undefined, 'meta', 'lastModified'],
    // An extension attribute without its URN, found in the one extension that has it.
    ['employeeNumber', ENTERPRISE, 'employeeNumber', undefined],
    ['Manager.value', ENTERPRISE, 'manager', 'value'],
  ])('%s', (path, schema, attribute, sub) => {
    const resolved = resolveAttributePath(user, path);
    expect(resolved?.kind).toBe('attribute');
    if (resolved?.kind !== 'attribute') return;
    expect(resolved.schema?.id).toBe(schema);
    expect(resolved.attribute.name).toBe(attribute);
    expect(resolved.subAttribute?.name).toBe(sub);
  });

  it('resolves an extension URN alone to the extension', () => {
    expect(resolveAttributePath(user, ENTERPRISE.toLowerCase())).toMatchObject({
      kind: 'extension',
      schema: { id: ENTERPRISE },
    });
  });

  it.each([
    'nope',
    'name.nope',
    'name.givenName.deeper',
    'userName.value',
    `${ENTERPRISE}:userName`,
    'urn:example:unknown:attr',
    USER,
    '',
  ])('does not resolve %s', (path) => {
    expect(resolveAttributePath(user, path)).toBeUndefined();
  });

  it('keeps resource types apart', () => {
    expect(resolveAttributePath(resourceTypes.Group, 'userName')).toBeUndefined();
    expect(resolveAttributePath(resourceTypes.Group, 'members.value')).toMatchObject({ kind: 'attribute' });
    expect(resolveAttributePath(resourceTypes.Group, `${ENTERPRISE}:department`)).toBeUndefined();
  });
});

describe('derivedOncePerName', () => {
  it('works each (object, name) pair out once, and keeps nothing when the work throws', () => {
    const remembered = derivedOncePerName<object, string>();
    const [a, b] = [{}, {}];
    let calls = 0;
    const make = (value: string) => () => {
      calls++;
      return value;
    };
    expect(remembered(a, 'x', make('ax'))).toBe('ax');
    expect(remembered(a, 'x', make('other'))).toBe('ax');
    expect(remembered(a, 'y', make('ay'))).toBe('ay');
    expect(remembered(b, 'x', make('bx'))).toBe('bx');
    expect(calls).toBe(3);
    const failing = () => {
      throw new Error('no');
    };
    expect(() => remembered(a, 'z', failing)).toThrow('no');
    expect(remembered(a, 'z', make('az'))).toBe('az');
  });
});
