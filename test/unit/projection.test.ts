import { describe, expect, it } from 'vitest';
import { parseAttributeList, projectAttributes } from '../../src/resources/projection.js';
import { resourceTypes } from '../../src/schema/registry.js';
import { ENTERPRISE, USER } from '../helpers/scim.js';

const user = resourceTypes.User;

const resource = {
  schemas: [USER, ENTERPRISE],
  id: 'u1',
  userName: 'ana',
  password: 'never-returned',
  name: { givenName: 'Ana', familyName: 'Ruiz' },
  emails: [
    { value: 'a@x', type: 'work', primary: true },
    { value: 'b@x', type: 'home' },
  ],
  [ENTERPRISE]: { department: 'Sales', employeeNumber: '7' },
  meta: { resourceType: 'User', location: 'https://h/Users/u1' },
};

describe('projectAttributes', () => {
  it('returns default attributes in a stable order, never the password', () => {
    const out = projectAttributes(resource, user);
    expect(Object.keys(out)).toEqual(['schemas', 'id', 'userName', 'name', 'emails', ENTERPRISE, 'meta']);
    expect(out).not.toHaveProperty('password');
  });

  it('keeps only the requested attributes plus id and schemas', () => {
    expect(projectAttributes(resource, user, { attributes: ['userName'] })).toEqual({
      schemas: resource.schemas,
      id: 'u1',
      userName: 'ana',
    });
  });

  it('narrows complex and multi-valued attributes to requested sub-attributes', () => {
    const out = projectAttributes(resource, user, { attributes: ['name.familyName', 'emails.type'] });
    expect(out.name).toEqual({ familyName: 'Ruiz' });
    expect(out.emails).toEqual([{ type: 'work' }, { type: 'home' }]);
  });

  it('selects an extension attribute or the whole extension', () => {
    expect(
      projectAttributes(resource, user, { attributes: [`${ENTERPRISE}:department`] })[ENTERPRISE],
    ).toEqual({
      department: 'Sales',
    });
    expect(projectAttributes(resource, user, { attributes: [ENTERPRISE] })[ENTERPRISE]).toEqual(
      resource[ENTERPRISE],
    );
  });

  it('excludes attributes, sub-attributes and extensions but never id', () => {
    const out = projectAttributes(resource, user, {
      excludedAttributes: ['emails', 'name.givenName', 'id', `${ENTERPRISE}:employeeNumber`, 'meta'],
    });
    expect(out).toEqual({
      schemas: resource.schemas,
      id: 'u1',
      userName: 'ana',
      name: { familyName: 'Ruiz' },
      [ENTERPRISE]: { department: 'Sales' },
    });
    expect(projectAttributes(resource, user, { excludedAttributes: [ENTERPRISE] })).not.toHaveProperty(
      ENTERPRISE,
    );
  });

  it('ignores names that are not in the schema', () => {
    expect(projectAttributes(resource, user, { attributes: ['userName', 'bogus'] })).toEqual({
      schemas: resource.schemas,
      id: 'u1',
      userName: 'ana',
    });
  });
});

describe('parseAttributeList', () => {
  it('splits, trims and drops a value filter after a name', () => {
    expect(parseAttributeList(' userName , emails[type eq "work"],,name.givenName')).toEqual([
      'userName',
      'emails',
      'name.givenName',
    ]);
    expect(parseAttributeList('')).toBeUndefined();
    expect(parseAttributeList(undefined)).toBeUndefined();
  });
});
