// Microsoft Entra ID's app role assignments against a live scimd whose organization has a catalogue of
// roles, in both PATCH dialects: the `roles` attribute mapped with AppRoleAssignmentsComplex (POST with
// each role, PATCH Add of a roles array — JSON text per role without the flag, objects with it —,
// Remove by `roles[value eq "…"]`) and with AssertiveAppRoleAssignmentsComplex (PATCH replace of the
// whole list). An app role whose value the catalogue lacks is refused, naming the allowed values.
import { randomUUID } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LIVE_ADMIN_TOKEN, useLiveServer } from '../live-server.js';
import {
  dialect,
  type EntraClient,
  entraClient,
  expectEntraReplies,
  expectScimError,
  getUser,
  type Json,
  MODES,
  patchUser,
  USER,
} from './entra-client.js';

const live = useLiveServer();

const APP_ROLE_TYPE = 'WindowsAzureActiveDirectoryRole';
const CATALOGUE = ['Admin', 'Reader', 'Billing'];

/** A role as AppRoleAssignmentsComplex writes it on POST: primary false, the app role's displayName. */
const postedRole = (value: string) => ({ primary: false, type: APP_ROLE_TYPE, displayName: value, value });
/** ... and as the flag's PATCH and AssertiveAppRoleAssignmentsComplex write it. */
const patchedRole = (value: string) => ({ primary: false, type: APP_ROLE_TYPE, display: value, value });
/** Without the flag, each role a PATCH adds is the app role assignment as JSON text. */
const textRole = (value: string) => ({
  value: JSON.stringify({ id: randomUUID(), value, displayName: value }),
});

const roleValues = (user: Json): string[] => (user.roles ?? []).map((r: Json) => r.value).sort();

describe.each(MODES)('Entra app roles, %s mode', (mode) => {
  const d = dialect(mode);
  let c: EntraClient;
  let orgId: string;
  /** The organization's own roles, as the operator sets them with the admin API. */
  const catalogue = async (values: string[]) => {
    const res = await fetch(`${live.root}/admin/v1/orgs/${orgId}/roles`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${LIVE_ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ roles: values.map((value) => ({ value, displayName: value })) }),
    });
    expect(res.status, await res.text()).toBe(200);
  };

  beforeAll(async () => {
    const tenant = await live.newTenant();
    orgId = tenant.orgId;
    await catalogue(CATALOGUE);
    c = entraClient(mode, tenant.baseUrl, tenant.token);
  });
  afterEach(() => expectEntraReplies(c));

  const createUser = async (roles: Json[]) => {
    const res = await c.post('/Users', {
      schemas: [USER],
      externalId: randomUUID(),
      userName: `${randomUUID()}@corp.example`,
      active: true,
      displayName: 'Ana Ruiz',
      roles,
    });
    expect(res.status, res.text).toBe(201);
    return res.body;
  };

  it('AppRoleAssignmentsComplex: POST with the user’s roles, PATCH Add of more, Remove of one by filter', async () => {
    const user = await createUser([postedRole('Reader')]);
    expect(user.roles).toEqual([{ primary: false, type: APP_ROLE_TYPE, value: 'Reader' }]);

    const added =
      mode === 'flag'
        ? [patchedRole('Admin'), patchedRole('Billing')]
        : [textRole('Admin'), textRole('Billing')];
    const afterAdd = await patchUser(c, user.id, [{ op: d.op('add'), path: 'roles', value: added }]);
    expect(roleValues(afterAdd)).toEqual(['Admin', 'Billing', 'Reader']);
    // Entra adds a role again on its next cycle: still one of each.
    const again = await patchUser(c, user.id, [{ op: d.op('add'), path: 'roles', value: added }]);
    expect(roleValues(again)).toEqual(['Admin', 'Billing', 'Reader']);

    const afterRemove = await patchUser(c, user.id, [
      { op: d.op('remove'), path: 'roles[value eq "Billing"]' },
    ]);
    expect(roleValues(afterRemove)).toEqual(['Admin', 'Reader']);
  });

  it('AssertiveAppRoleAssignmentsComplex: PATCH replace of the whole list removes what Entra no longer assigns', async () => {
    const user = await createUser([postedRole('Admin'), postedRole('Reader')]);
    const replaced = await patchUser(c, user.id, [
      { op: d.op('replace'), path: 'roles', value: [patchedRole('Billing')] },
    ]);
    expect(replaced.roles).toEqual([patchedRole('Billing')]);
    const emptied = await patchUser(c, user.id, [{ op: d.op('replace'), path: 'roles', value: [] }]);
    expect(roleValues(emptied)).toEqual([]);
  });

  it('refuses an app role whose value the catalogue lacks, naming the allowed values, and changes nothing', async () => {
    const refused = await c.post('/Users', {
      schemas: [USER],
      userName: `${randomUUID()}@corp.example`,
      active: true,
      roles: [postedRole('Owner')],
    });
    expectScimError(refused, 400, 'invalidValue');
    expect(refused.body.detail).toMatch(/"Owner"/);
    expect(refused.body.detail).toMatch(/allowed: "Admin", "Billing", "Reader"/);

    const user = await createUser([postedRole('Reader')]);
    const value = mode === 'flag' ? [patchedRole('Owner')] : [textRole('Owner')];
    const res = await c.patch(`/Users/${user.id}`, [{ op: d.op('add'), path: 'roles', value }]);
    expectScimError(res, 400, 'invalidValue');
    expect(roleValues(await getUser(c, user.id))).toEqual(['Reader']);
  });

  it('deactivates a user whose role the catalogue has since dropped', async () => {
    const user = await createUser([postedRole('Billing')]);
    await catalogue(CATALOGUE.filter((v) => v !== 'Billing'));
    try {
      const off = await patchUser(c, user.id, [
        { op: d.op('replace'), path: 'active', value: d.bool(false) },
      ]);
      expect(off.active).toBe(false);
    } finally {
      await catalogue(CATALOGUE);
    }
  });
});
