// The catalogue's SQL on a real database: an organization's catalogue is the environment's entries and
// its own, each with its scope; a replaced scope keeps an entry's id while its value stays.
import { expect, it } from 'vitest';
import {
  effectiveCatalogue,
  replaceScopeCatalogue,
  scopeCatalogue,
} from '../../src/roles/catalogue.repository.js';
import { type Harness, useHarness } from '../helpers/harness.js';

let harness: Harness;
useHarness((h) => {
  harness = h;
});

const role = (value: string, priority = 0) => ({ value, displayName: value, description: '', priority });

it("answers the environment's entries and the organization's own, each with its scope", async () => {
  const db = harness.database.db;
  const org = await harness.createOrg({ name: 'Catalogue' });
  const other = await harness.createOrg({ name: 'Other' });
  const now = new Date();
  await replaceScopeCatalogue(db, null, 'roles', [role('viewer', 1), role('admin', 10)], now);
  await replaceScopeCatalogue(db, org.id, 'roles', [role('auditor', 5)], now);
  await replaceScopeCatalogue(db, other.id, 'roles', [role('billing')], now);
  await replaceScopeCatalogue(db, org.id, 'entitlements', [role('reports')], now);

  const roles = await effectiveCatalogue(db, org.id, 'roles');
  expect(roles.map((r) => [r.value, r.scope, r.priority])).toEqual([
    ['admin', 'environment', 10],
    ['viewer', 'environment', 1],
    ['auditor', 'organization', 5],
  ]);
  const entitlements = await effectiveCatalogue(db, org.id, 'entitlements');
  expect(entitlements).toEqual([
    {
      id: expect.any(String),
      value: 'reports',
      displayName: 'reports',
      description: '',
      scope: 'organization',
    },
  ]);

  const adminId = roles[0]!.id;
  await replaceScopeCatalogue(db, null, 'roles', [{ ...role('Admin', 20), description: 'All of it' }], now);
  expect(await scopeCatalogue(db, null, 'roles')).toEqual([
    {
      id: adminId,
      value: 'Admin',
      displayName: 'Admin',
      description: 'All of it',
      priority: 20,
      scope: 'environment',
    },
  ]);
});
