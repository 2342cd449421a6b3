// Two scimd processes on one Postgres, each remembering token checks: an admin change made through
// one reaches the other's next requests through NOTIFY, not by its remembered checks lapsing. The
// other's checks are aged by a clock that stands still, so they never lapse here: only the message
// can make it answer differently.
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

/** The other process's clock for its remembered checks: it never moves, so they never lapse. */
const STANDING_STILL = { now: () => 1_000_000 };

let harness: Harness;
let other: ReturnType<typeof supertest>;
let otherChecks: TokenChecks;
let listening: Listening | undefined;
useHarness(async (h) => {
  harness = h;
  otherChecks = new TokenCache(TOKEN_CACHE_TTL_MS, STANDING_STILL);
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

/** Asks the other process for `path`, with `token`, and answers with the status it gets. */
const otherStatus = async (path: string, token: string) =>
  (await other.get(path).set('Authorization', `Bearer ${token}`)).status;

/**
 * Resolves once the other process answers `path` with `status`: when it has heard the change. The
 * timeout only bounds a failure; its checks would never lapse, however long it waited.
 */
async function otherAnswers(path: string, token: string, status: number): Promise<void> {
  await expect.poll(() => otherStatus(path, token), { timeout: 10_000, interval: 20 }).toBe(status);
}

describe.skipIf(!onPostgres)('admin changes across processes', () => {
  it('a token revoked through one process is refused by the other once it hears of it', async () => {
    const org = await harness.tenant();
    await other.get(`${org.basePath}/Users`).set('Authorization', `Bearer ${org.token}`).expect(200);
    expect(otherChecks.size).toBeGreaterThan(0);
    const { body } = await harness.http
      .get(`/admin/v1/orgs/${org.orgId}/tokens`)
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .expect(200);
    await admin('post', `/orgs/${org.orgId}/tokens/${body.tokens[0].id}/revoke`, {}).expect(200);
    await otherAnswers(`${org.basePath}/Users`, org.token, 401);
  });

  it('group sync switched off through one process is enforced by the other once it hears of it', async () => {
    const org = await harness.createOrg({ name: 'Syncing', groupSync: true });
    const token = await harness.createToken(org.id);
    await other.get(`${org.basePath}/Groups`).set('Authorization', `Bearer ${token}`).expect(200);
    await admin('patch', `/orgs/${org.id}`, { groupSync: false }).expect(200);
    await otherAnswers(`${org.basePath}/Groups`, token, 403);
  });

  it("an organization's new schema, put through one process, is served by the other once it hears of it", async () => {
    const org = await harness.tenant();
    const urn = 'urn:ietf:params:scim:schemas:extension:acme:2.0:User';
    await other.get(`${org.basePath}/Schemas/${urn}`).set('Authorization', `Bearer ${org.token}`).expect(404);
    await harness.http
      .put(`/admin/v1/orgs/${org.orgId}/schemas/${urn}`)
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({ id: urn, attributes: [{ name: 'costCenter', type: 'string' }] })
      .expect(201);
    await otherAnswers(`${org.basePath}/Schemas/${urn}`, org.token, 200);
  });
});
