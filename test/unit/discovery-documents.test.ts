// Discovery documents are built once per organization, version of its schemas and catalogues it has,
// not per request.
import { describe, expect, it } from 'vitest';
import { DiscoveryDocuments } from '../../src/discovery/discovery-documents.js';
import { registryWith } from '../../src/schema/custom-schemas.js';
import { standardRegistry } from '../../src/schema/registry.js';

const BASE = 'https://scim.example.com/scim/v2/6f1c0000-0000-4000-8000-000000000000';
const NONE = { roles: false, entitlements: false };
const custom = (description: string) =>
  registryWith([
    {
      id: 'urn:acme:people:User',
      name: 'People',
      description,
      resourceType: 'User',
      attributes: [],
    },
  ]);

describe('DiscoveryDocuments', () => {
  it('answers the same bytes for one registry, and builds anew for the next version', () => {
    const documents = new DiscoveryDocuments();
    const first = documents.of(BASE, standardRegistry, NONE);
    expect(documents.of(BASE, standardRegistry, NONE).schemas).toBe(first.schemas);
    expect(JSON.parse(first.schemas.toString()).Resources.map((s: { id: string }) => s.id)).toEqual(
      standardRegistry.schemas.map((s) => s.id),
    );
    const version2 = custom('second version');
    const second = documents.of(BASE, version2, NONE);
    expect(second.schemas).not.toBe(first.schemas);
    expect(second.schemas.toString()).toContain('second version');
    expect(documents.of(BASE, version2, NONE).resourceTypes).toBe(second.resourceTypes);
  });

  it('lists Role and Entitlement while the catalogue of each has entries, and builds anew when that changes', () => {
    const documents = new DiscoveryDocuments();
    const ids = (list: Buffer) => JSON.parse(list.toString()).Resources.map((r: { id: string }) => r.id);
    const none = documents.of(BASE, standardRegistry, NONE);
    expect(ids(none.resourceTypes)).toEqual(['User', 'Group']);
    const roles = documents.of(BASE, standardRegistry, { roles: true, entitlements: false });
    expect(ids(roles.resourceTypes)).toEqual(['User', 'Group', 'Role']);
    expect(ids(roles.schemas)).toContain('urn:ietf:params:scim:schemas:core:2.0:Role');
    expect(ids(roles.schemas)).not.toContain('urn:ietf:params:scim:schemas:core:2.0:Entitlement');
    const both = documents.of(BASE, standardRegistry, { roles: true, entitlements: true });
    expect(ids(both.resourceTypes)).toEqual(['User', 'Group', 'Role', 'Entitlement']);
    expect(documents.of(BASE, standardRegistry, { roles: true, entitlements: true })).toBe(both);
    expect(ids(documents.of(BASE, standardRegistry, NONE).resourceTypes)).toEqual(['User', 'Group']);
  });

  it('keeps each organization’s own base URL in its locations', () => {
    const documents = new DiscoveryDocuments();
    const other = BASE.replace('6f1c', '7a2d');
    expect(documents.of(other, standardRegistry, NONE).schemas.toString()).toContain(`${other}/Schemas/`);
    expect(documents.of(BASE, standardRegistry, NONE).schemas.toString()).not.toContain(other);
  });

  it('renders a single document once', () => {
    const documents = new DiscoveryDocuments();
    let renders = 0;
    const built = documents.of(BASE, standardRegistry, NONE);
    const render = () => {
      renders++;
      return { id: 'x' };
    };
    expect(built.single('schema:x', render)).toBe(built.single('schema:x', render));
    expect(renders).toBe(1);
  });
});
