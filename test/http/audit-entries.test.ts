// What the audit log records of SCIM writes (src/http/scim-state.ts, auditedTransaction): one entry
// per write, committed with the change when the write succeeds, written after the answer when not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listAudit } from '../../src/audit/audit.repository.js';
import { type Harness, startHarness, type Tenant } from '../helpers/harness.js';

let harness: Harness;
let t: Tenant;

beforeAll(async () => {
  harness = await startHarness();
  t = await harness.tenant();
});
afterAll(() => harness.close());

const user = (userName: string) => ({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName });

async function entriesOf(requestId: string) {
  const { events } = await listAudit(harness.database.db, t.orgId, { limit: 1000 });
  return events.filter((e) => e.requestId === requestId);
}

describe('audit entries of SCIM writes', () => {
  it('records an id written in upper case in the path as stored, in lower case', async () => {
    const created = await t.post('/Users', user('upper.case@corp.example')).expect(201);
    const id = created.body.id as string;
    const res = await t
      .put(`/Users/${id.toUpperCase()}`, user('upper.case@corp.example'))
      .set('X-Request-Id', 'audit-upper-put')
      .expect(200);
    expect(res.body.id).toBe(id);
    const [entry, ...more] = await entriesOf('audit-upper-put');
    expect(more).toEqual([]);
    expect(entry).toMatchObject({ action: 'user.replace', resourceId: id, status: 200 });
  });

  it('records a create with its new id once, and a create that failed once with its status', async () => {
    const res = await t
      .post('/Users', user('once@corp.example'))
      .set('X-Request-Id', 'audit-once')
      .expect(201);
    expect(await entriesOf('audit-once')).toEqual([
      expect.objectContaining({ action: 'user.create', resourceId: res.body.id, status: 201 }),
    ]);
    await t.post('/Users', user('ONCE@corp.example')).set('X-Request-Id', 'audit-twice').expect(409);
    expect(await entriesOf('audit-twice')).toEqual([
      expect.objectContaining({ action: 'user.create', resourceId: null, status: 409 }),
    ]);
  });

  it('records a PATCH answered 204 for Prefer: return=minimal with that status', async () => {
    const created = await t.post('/Users', user('minimal@corp.example')).expect(201);
    await t
      .patch(`/Users/${created.body.id}`, {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
        Operations: [{ op: 'replace', path: 'active', value: false }],
      })
      .set('Prefer', 'return=minimal')
      .set('X-Request-Id', 'audit-minimal')
      .expect(204);
    expect(await entriesOf('audit-minimal')).toEqual([
      expect.objectContaining({ action: 'user.patch', resourceId: created.body.id, status: 204 }),
    ]);
  });

  it('rolls back the change and its entry together: a write that fails leaves only its failure', async () => {
    const created = await t.post('/Users', user('rollback@corp.example')).expect(201);
    await t.post('/Users', user('taken@corp.example')).expect(201);
    // The replacement takes a userName already used: the UPDATE fails inside the transaction.
    await t
      .put(`/Users/${created.body.id}`, user('taken@corp.example'))
      .set('X-Request-Id', 'audit-rollback')
      .expect(409);
    expect(await entriesOf('audit-rollback')).toEqual([
      expect.objectContaining({ action: 'user.replace', resourceId: created.body.id, status: 409 }),
    ]);
    const after = await t.get(`/Users/${created.body.id}`).expect(200);
    expect(after.body.userName).toBe('rollback@corp.example');
  });
});
