// Concurrent PATCHes on one user never lose an update: each runs under the user's row lock.
import { expect, it } from 'vitest';
import { type Tenant, useHarness } from '../helpers/harness.js';

let t: Tenant;
useHarness(async (h) => {
  t = await h.tenant();
});

it('keeps every change of 40 parallel PATCHes on one user', async () => {
  const user = (await t.post('/Users', { userName: 'busy' }).expect(201)).body;
  const patches = Array.from({ length: 40 }, (_, i) =>
    t.patch(`/Users/${user.id}`, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [{ op: 'add', path: 'emails', value: [{ value: `e${i}@corp.example`, type: `t${i}` }] }],
    }),
  );
  const results = await Promise.all(patches);
  expect(results.map((r) => r.status)).toEqual(results.map(() => 200));
  const final = (await t.get(`/Users/${user.id}`).expect(200)).body;
  const values = (final.emails as { value: string }[]).map((e) => e.value).sort();
  expect(values).toEqual(Array.from({ length: 40 }, (_, i) => `e${i}@corp.example`).sort());
});

it('keeps every change when merged PATCHes race PATCHes that read and apply', async () => {
  const user = (await t.post('/Users', { userName: 'mixed' }).expect(201)).body;
  const merged = ['title', 'nickName', 'displayName', 'locale', 'timezone', 'profileUrl'].map((attribute) =>
    t.patch(`/Users/${user.id}`, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [{ op: 'replace', path: attribute, value: `${attribute}-set` }],
    }),
  );
  const applied = Array.from({ length: 6 }, (_, i) =>
    t.patch(`/Users/${user.id}`, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [{ op: 'add', path: 'emails', value: [{ value: `m${i}@corp.example`, type: `t${i}` }] }],
    }),
  );
  const results = await Promise.all([...merged, ...applied]);
  expect(results.map((r) => r.status)).toEqual(results.map(() => 200));
  const final = (await t.get(`/Users/${user.id}`).expect(200)).body;
  for (const attribute of ['title', 'nickName', 'displayName', 'locale', 'timezone', 'profileUrl']) {
    expect(final[attribute]).toBe(`${attribute}-set`);
  }
  expect(final.emails).toHaveLength(6);
});
