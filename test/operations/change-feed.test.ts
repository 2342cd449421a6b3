// The change feed across two scimd processes on one database: writes through both, a follower
// reading through one, and a long poll woken by a write through one of them. That long poll waits in
// an app of this test's own on the same database, built as scimd builds it: only there can the test
// see when the poll waits (ChangeFeed.longPolls) and which event ended its wait.
import { pino } from 'pino';
import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { ChangeFeed, type ChangeFeedOptions } from '../../src/changes/change-feed.js';
import { type Database, openDatabase } from '../../src/db/database.js';
import { createScratchDatabase, onPostgres, type ScratchDatabase } from '../helpers/database.js';
import { proveFeed } from '../helpers/feed-proof.js';
import { newUser, type RemoteTenant, remote } from '../helpers/remote.js';
import { type ScimdProcess, startScimd } from '../helpers/scimd-process.js';

const ADMIN_TOKEN = 'feed-admin-token-0123456789abcdefghij';

describe.skipIf(!onPostgres)('the change feed across two scimd processes', () => {
  let scratch: ScratchDatabase;
  let a: ScimdProcess;
  let b: ScimdProcess;
  const tenants: RemoteTenant[] = [];
  /** This test's own app: its database, its change feed, and requests to it. */
  let database: Database | undefined;
  let feed: ChangeFeed | undefined;
  let here: ReturnType<typeof supertest>;
  /** How many times a NOTIFY heard here ended a long poll's wait as it was handled. */
  let wokenByMessage = 0;
  beforeAll(async () => {
    scratch = await createScratchDatabase();
    const env = { DATABASE_URL: scratch.url, SCIMD_ADMIN_TOKEN: ADMIN_TOKEN };
    a = await startScimd(env);
    b = await startScimd(env);
    for (let i = 0; i < 2; i++) tenants.push(await remote(a.origin, ADMIN_TOKEN).tenant(`feed ${i}`));
    const opened = await openDatabase({ databaseUrl: scratch.url });
    database = opened;
    const listen: ChangeFeedOptions['listen'] = (channel, onMessage, onGap) =>
      opened.listen!(
        channel,
        (payload) => {
          const waiting = changes.longPolls;
          onMessage(payload);
          if (changes.longPolls < waiting) wokenByMessage++;
        },
        onGap,
      );
    const changes = new ChangeFeed(opened.db, { schema: opened.schema, listen });
    feed = changes;
    await changes.start();
    const logger = pino({ level: 'silent' });
    here = supertest(
      createApp({
        database: opened,
        publicUrl: 'http://scimd.test',
        adminToken: ADMIN_TOKEN,
        logger,
        changes,
      }).callback(),
    );
  }, 120_000);
  afterAll(async () => {
    await feed?.stop();
    await database?.close();
    await a?.stop();
    await b?.stop();
    await scratch?.drop();
  });

  it('a follower through one process sees exactly what both committed', async () => {
    const processes = [a.origin, b.origin];
    const byOrg = new Map(tenants.map((t) => [t.orgId, t]));
    const { changes } = await proveFeed(
      {
        scim: (orgId, writer, method, path, body) => {
          const t = byOrg.get(orgId)!;
          return remote(processes[writer]!, ADMIN_TOKEN)
            .as(orgId, t.tokenId, t.token)
            .scim(method, path, body);
        },
        changes: (query) => remote(a.origin, ADMIN_TOKEN).admin('GET', `/changes?${query}`),
      },
      { orgIds: tenants.map((t) => t.orgId), concurrency: 24, writesEach: 10, writers: 2 },
    );
    expect(changes).toBeGreaterThan(24 * 10 * 3);
  }, 120_000);

  it("a long poll is woken by a write through another process: by that write's NOTIFY, not the recheck", async () => {
    const [t] = tenants;
    const changesAfter = (after: string, more = '') =>
      here
        .get(`/admin/v1/changes?orgId=${t!.orgId}&after=${after}${more}`)
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`);
    const end = await here
      .get(`/admin/v1/changes?orgId=${t!.orgId}&limit=1000`)
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`);
    let after = end.body.nextCursor;
    for (let more = end.body.changes.length; more > 0; ) {
      const page = await changesAfter(after, '&limit=1000');
      after = page.body.nextCursor;
      more = page.body.changes.length;
    }
    const polls = feed!.longPolls;
    const woken = wokenByMessage;
    const waiting = changesAfter(after, '&wait=20').then((res) => res);
    await expect.poll(() => feed!.longPolls, { timeout: 10_000 }).toBe(polls + 1);
    const created = await remote(b.origin, ADMIN_TOKEN)
      .as(t!.orgId, t!.tokenId, t!.token)
      .scim('POST', '/Users', newUser('woken@example.com'));
    expect(created.status).toBe(201);
    const res = await waiting;
    expect(res.status).toBe(200);
    expect(res.body.changes.map((c: { data: { user_name: string } }) => c.data.user_name)).toEqual([
      'woken@example.com',
    ]);
    // The poll was still waiting when the message came, and the message ended the wait: the recheck
    // (every second while a poll waits) would also have found the change, later.
    expect(wokenByMessage).toBe(woken + 1);
  }, 60_000);
});
