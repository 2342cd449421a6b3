// The command line's roles and entitlements against a running server: the environment's catalogue set
// from a file, an organization's whole catalogue, its mappings shown and put from a file, a user's
// effective values; tables and --json, and a refusal's message and exit code.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { main } from '../../src/cli.js';
import { LIVE_ADMIN_TOKEN as ADMIN, useLiveServer } from '../conformance/live-server.js';

const live = useLiveServer();
const dir = mkdtempSync(join(tmpdir(), 'scimd-cli-roles-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function run(argv: string[]) {
  let out = '';
  let err = '';
  const code = await main(argv, {
    out: (t) => {
      out += t;
    },
    err: (t) => {
      err += t;
    },
    env: { SCIMD_URL: live.origin, SCIMD_ADMIN_TOKEN: ADMIN },
  });
  return { code, out, err };
}

async function json(argv: string[]) {
  const result = await run([...argv, '--json']);
  expect(result.code, result.err).toBe(0);
  return JSON.parse(result.out);
}

function file(name: string, value: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(value));
  return path;
}

it('sets the catalogue, maps a group, and shows a user its roles', async () => {
  const roles = file('roles.json', [
    { value: 'viewer', displayName: 'Viewer', priority: 1 },
    { value: 'admin', displayName: 'Administrator', priority: 10 },
  ]);
  const set = await run(['roles', 'set', roles]);
  expect(set.code, set.err).toBe(0);
  expect(set.out).toMatch(/^value +displayName +priority +scope +description$/m);
  expect(set.out).toMatch(/^admin +Administrator +10 +environment/m);
  expect(
    await json(['entitlements', 'set', file('entitlements.json', { entitlements: [{ value: 'reports' }] })]),
  ).toEqual({
    entitlements: [{ value: 'reports', displayName: 'reports', description: '', scope: 'environment' }],
  });

  const catalogue = await json(['org', 'roles', live.orgId]);
  expect(catalogue.roles.map((r: { value: string }) => r.value)).toEqual(['admin', 'viewer']);
  expect(catalogue.entitlements).toHaveLength(1);
  expect((await run(['org', 'roles', live.orgId])).out).toMatch(
    /^Roles\n[\s\S]*^Entitlements\n[\s\S]*reports/m,
  );

  expect(await json(['org', 'role-mappings', live.orgId])).toEqual({
    mappings: [],
    defaultRole: null,
    mode: 'multiple',
  });
  const mappings = file('mappings.json', {
    mappings: [{ group: { displayName: 'Admins' }, role: 'admin' }],
    defaultRole: 'viewer',
    mode: 'single',
  });
  const put = await run(['org', 'role-mappings', live.orgId, mappings]);
  expect(put.code, put.err).toBe(0);
  expect(put.out).toMatch(/^defaultRole +viewer$/m);
  expect(put.out).toMatch(/^Admins +displayName +admin$/m);

  const user = await live.scim('POST', '/Users', {
    body: { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'cli-roles@example.com' },
  });
  expect(user.status, user.text).toBe(201);
  expect(await json(['user', 'roles', live.orgId, user.body.id])).toEqual({
    roles: [{ value: 'viewer', sources: ['default'] }],
    entitlements: [],
  });
  expect((await run(['user', 'roles', live.orgId, user.body.id])).out).toMatch(/^role +viewer +default$/m);
});

it('says what is wrong, with the exit code of a refusal or a usage error', async () => {
  const refused = await run([
    'org',
    'role-mappings',
    live.orgId,
    file('bad.json', { mappings: [{ group: { displayName: 'X' }, role: 'superuser' }], mode: 'multiple' }),
  ]);
  expect(refused.code).toBe(1);
  expect(refused.err).toContain('"superuser"');
  const usage = await run(['org', 'role-mappings']);
  expect(usage.code).toBe(2);
  expect(usage.err).toContain('expected ORG_ID [FILE]');
  const missing = await run(['roles', 'set', join(dir, 'nope.json')]);
  expect(missing.code).toBe(2);
});
