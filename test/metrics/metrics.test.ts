// /metrics in the Prometheus text format: behind the admin token, the names and labels the README
// lists, route templates instead of paths, and never an organization, a user or a token in a label.
import { describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, type Harness, useHarness } from '../helpers/harness.js';
import { filterQuery, USER } from '../helpers/scim.js';

let harness: Harness;
useHarness((h) => {
  harness = h;
});

const scrape = async (): Promise<string> => {
  const res = await harness.http.get('/metrics').set('Authorization', `Bearer ${ADMIN_TOKEN}`).expect(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text;
};

/** The value of the sample `name{labels}` (labels in the order prom-client writes them). */
const sample = (text: string, series: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe('/metrics', () => {
  it('answers only the admin token', async () => {
    const t = await harness.tenant();
    await harness.http.get('/metrics').expect(401);
    await harness.http.get('/metrics').set('Authorization', `Bearer ${t.token}`).expect(401);
    await harness.http.post('/metrics').set('Authorization', `Bearer ${ADMIN_TOKEN}`).expect(405);
  });

  it('counts requests by route template, method and status class, and SCIM operations by outcome', async () => {
    const t = await harness.tenant();
    const before = await scrape();
    const route = 'http_route="/scim/v2/:orgId/Users/:id"';
    const series = `http_server_request_duration_seconds_count{http_request_method="GET",${route},http_response_status_class="2xx"}`;
    const created = `scimd_scim_operations_total{resource="users",operation="create",outcome="success"}`;
    const conflicts = `scimd_scim_operations_total{resource="users",operation="create",outcome="client_error"}`;

    const id = (await t.post('/Users', { schemas: [USER], userName: 'metrics@example.com' }).expect(201)).body
      .id;
    await t.post('/Users', { schemas: [USER], userName: 'metrics@example.com' }).expect(409);
    await t.get(`/Users/${id}`).expect(200);
    await t.get(`/Users/${id}`).expect(200);
    await t.get(`/Users?${filterQuery('userName eq "metrics@example.com"')}`).expect(200);
    await t.get('/Nowhere/at/all').expect(404);
    await harness.http.get('/made-up-path').expect(404);

    const after = await scrape();
    expect((sample(after, series) ?? 0) - (sample(before, series) ?? 0)).toBe(2);
    expect((sample(after, created) ?? 0) - (sample(before, created) ?? 0)).toBe(1);
    expect((sample(after, conflicts) ?? 0) - (sample(before, conflicts) ?? 0)).toBe(1);
    expect(after).toContain('http_route="/scim/v2/:orgId/Users"');
    expect(after).toContain('http_route="/scim/v2/:orgId/unmatched"');
    expect(after).toContain('http_route="unmatched"');
    expect(after).toContain('http_route="/admin/v1/orgs/:orgId/tokens"');
    expect(after).toMatch(/http_server_request_duration_seconds_bucket\{le="0\.005",/);
    // No organization, user, token, path or filter value in any label.
    for (const secret of [
      t.orgId,
      id,
      t.token.slice(0, 12),
      'metrics@example.com',
      'Nowhere',
      'made-up-path',
    ])
      expect(after).not.toContain(secret);
  });

  it('reports the database pool, failures, the change feed and each webhook endpoint', async () => {
    const t = await harness.tenant();
    await t.post('/Users', { schemas: [USER], userName: 'feed@example.com' }).expect(201);
    await harness.admin('get', '/changes?limit=1000').expect(200);
    const hook = await harness.admin('post', '/webhooks').send({
      url: 'https://receiver.example/scimd',
      events: ['user.created'],
      orgId: t.orgId,
    });
    expect(hook.status, hook.text).toBe(201);
    const text = await scrape();
    expect(sample(text, 'scimd_db_pool_connections{state="in_use"}')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'scimd_db_pool_connections{state="idle"}')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'scimd_db_pool_waiting_requests')).toBe(0);
    expect(sample(text, 'scimd_db_statement_timeouts_total')).toBe(0);
    expect(sample(text, 'scimd_db_fair_share_rejections_total')).toBe(0);
    expect(sample(text, 'scimd_change_feed_position')).toBeGreaterThan(0);
    expect(sample(text, `scimd_webhook_endpoint_lag_changes{endpoint="${hook.body.id}"}`)).toBe(0);
    expect(sample(text, `scimd_webhook_endpoint_pending_deliveries{endpoint="${hook.body.id}"}`)).toBe(0);
    expect(sample(text, `scimd_webhook_endpoint_failing_deliveries{endpoint="${hook.body.id}"}`)).toBe(0);
  });
});

describe('process metrics', () => {
  it('are on the registry of a process that asks for them (index.ts does)', async () => {
    const { Metrics } = await import('../../src/metrics/metrics.js');
    const metrics = new Metrics({
      db: harness.database.db,
      share: harness.database.share,
      processMetrics: true,
    });
    const text = await metrics.registry.metrics();
    for (const name of [
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
    ])
      expect(text).toContain(`# TYPE ${name}`);
  });
});

describe('database failures', () => {
  it('count statement timeouts and fair-share rejections apart, and nothing else', async () => {
    const { Metrics } = await import('../../src/metrics/metrics.js');
    const metrics = new Metrics({ db: harness.database.db, share: harness.database.share });
    for (const kind of ['timeout', 'timeout', 'busy', 'unavailable', 'conflict'])
      metrics.databaseFailure(kind);
    const text = await metrics.registry.metrics();
    expect(sample(text, 'scimd_db_statement_timeouts_total')).toBe(2);
    expect(sample(text, 'scimd_db_fair_share_rejections_total')).toBe(1);
  });
});
