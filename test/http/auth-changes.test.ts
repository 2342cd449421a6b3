// Two scimd processes on one Postgres, each remembering token checks: an admin change made through
// one reaches the other's next requests through NOTIFY, well before the remembered checks lapse.
// PGlite serves one process, so there is nobody else to tell; this runs on Postgres only.
import { pino } from 'pino';
import supertest from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import type { Listening } from '../../src/db/database.js';
import { followAuthChanges } from '../../src/orgs/auth-changes.js';
import type { TokenChecks } from '../../src/orgs/scim-auth.js';
import { TOKEN_CACHE_TTL_MS, TokenCache } from '../../src/orgs/token-cache.js';
import { onPostgres } from '../helpers/database.js';
import { ADMIN_TOKEN, type Harness, PUBLIC_URL, useHarness } from '../helpers/harness.js';
import { sleep } from '../helpers/system.js';

let harness: Harness;
let other: ReturnType<typeof supertest>;
let otherChecks: TokenChecks;
let listening: Listening | undefined;
useHarness(async (h) => {
  harness = h;
  otherChecks = new TokenCache();
  listening = followAuthChanges(h.database, otherChecks, pino({ level: 'silent' }));
  await listening?.ready;
  const app = createApp({
    database: h.database,
    publicUrl: PUBLIC_URL,
    adminToken: ADMIN_TOKEN,
    logger: pino({ level: 'silent' }),
    tokenChecks: otherChecks,
  });
  other = supertest(app.callback());
});
afterAll(() => listening?.stop());

const admin = (method: 'post' | 'patch', path: string, body: object) =>
  harness.http[method](`/admin/v1${path}`).set('Authorization', `Bearer ${ADMIN_TOKEN}`).send(body);

/** Polls the other process until `path` answers `status`; returns how long that took. */
async function otherAnswers(path: string, token: string, status: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    const res = await other.get(path).set('Authorization', `Bearer ${token}`);
    if (res.status === status) return Date.now() - started;
    if (Date.now() - started > TOKEN_CACHE_TTL_MS + 2000) throw new Error(`still ${res.status}`);
    await sleep(20);
  }
}

describe.skipIf(!onPostgres)('admin changes across processes', () => {
  it('a token revoked through one process is refused by the other within a second', async () => {
    const org = await harness.tenant();
    await other.get(`${org.basePath}/Users`).set('Authorization', `Bearer ${org.token}`).expect(200);
    expect(otherChecks.size).toBeGreaterThan(0);
    const { body } = await harness.http
      .get(`/admin/v1/orgs/${org.orgId}/tokens`)
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .expect(200);
    await admin('post', `/orgs/${org.orgId}/tokens/${body.tokens[0].id}/revoke`, {}).expect(200);
    expect(await otherAnswers(`${org.basePath}/Users`, org.token, 401)).toBeLessThan(1000);
  });

  it('group sync switched off through one process is enforced by the other within a second', async () => {
    const org = await harness.createOrg({ name: 'Syncing', groupSync: true });
    const token = await harness.createToken(org.id);
    await other.get(`${org.basePath}/Groups`).set('Authorization', `Bearer ${token}`).expect(200);
    await admin('patch', `/orgs/${org.id}`, { groupSync: false }).expect(200);
    expect(await otherAnswers(`${org.basePath}/Groups`, token, 403)).toBeLessThan(1000);
  });

  it("an organization's new schema, put through one process, is served by the other within a second", async () => {
    const org = await harness.tenant();
    const urn = 'urn:ietf:params:scim:schemas:extension:acme:2.0:User';
    await other.get(`${org.basePath}/Schemas/${urn}`).set('Authorization', `Bearer ${org.token}`).expect(404);
    await harness.http
      .put(`/admin/v1/orgs/${org.orgId}/schemas/${urn}`)
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({ id: urn, attributes: [{ name: 'costCenter', type: 'string' }] })
      .expect(201);
    expect(await otherAnswers(`${org.basePath}/Schemas/${urn}`, org.token, 200)).toBeLessThan(1000);
  });
});
