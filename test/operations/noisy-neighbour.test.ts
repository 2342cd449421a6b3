// One organization cannot starve the others. The attack of the issue that found it (900 KB display
// names, twelve concurrent 250-term substring searches) is refused by the limits; what the limits
// allow runs in the organization's own share of the pool, under the statement time limit, while
// another organization's lookups keep succeeding, quickly.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_FILTER_TERMS } from '../../src/filter/parse.js';
import { STRING_MAX_LENGTH } from '../../src/schema/attribute.js';
import { onPostgres } from '../helpers/database.js';
import { type Harness, startHarness, type Tenant } from '../helpers/harness.js';

const substringSearch = (terms: number) =>
  encodeURIComponent(Array.from({ length: terms }, (_, i) => `displayName co "needle-${i}"`).join(' or '));

/** Milliseconds of each of `n` sequential lookups of `userName` in `t`, all of which must find it. */
async function lookups(t: Tenant, userName: string, n: number): Promise<number[]> {
  const took: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    const res = await t.get(`/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`);
    took.push(performance.now() - started);
    expect(res.status).toBe(200);
    expect(res.body.totalResults).toBe(1);
  }
  return took;
}

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))]!;

describe('a noisy organization', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(() => harness?.close());

  it("is refused the issue's attack, and what the limits allow leaves another organization's lookups succeeding", async () => {
    const noisy = await harness.tenant();
    const quiet = await harness.tenant();
    await quiet.post('/Users', { userName: 'quiet@corp.example' }).expect(201);

    const huge = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        noisy.post('/Users', { userName: `huge${i}@corp.example`, displayName: 'x'.repeat(900_000) }),
      ),
    );
    expect(huge.map((r) => r.status)).toEqual([400, 400, 400, 400]);
    const wide = await Promise.all(
      Array.from({ length: 12 }, () => noisy.get(`/Users?filter=${substringSearch(250)}`)),
    );
    expect(wide.every((r) => r.status === 400 && r.body.scimType === 'invalidFilter')).toBe(true);

    // The most the limits allow, concurrently with the other organization's lookups.
    for (let i = 0; i < 4; i++) {
      await noisy
        .post('/Users', { userName: `fat${i}@corp.example`, displayName: 'y'.repeat(STRING_MAX_LENGTH) })
        .expect(201);
    }
    const storm = Promise.all(
      Array.from({ length: 12 }, () => noisy.get(`/Users?filter=${substringSearch(MAX_FILTER_TERMS)}`)),
    );
    const took = await lookups(quiet, 'quiet@corp.example', 30);
    const searched = await storm;
    expect(searched.map((r) => r.status).filter((s) => s >= 500)).toEqual([]);
    console.log(
      `quiet organization's lookups during the storm: p50 ${percentile(took, 50).toFixed(1)} ms, p99 ${percentile(took, 99).toFixed(1)} ms`,
    );
  });
});

// Postgres enforces the statement time limit (PGlite cannot interrupt a statement: see the README).
describe.skipIf(!onPostgres)('a noisy organization with many large users, on Postgres', () => {
  const STATEMENT_TIMEOUT_MS = 1_000;
  const FAT_USERS = 20_000;
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({
      database: { poolSize: 6, poolPerOrg: 3, poolWaitMs: 3_000, statementTimeoutMs: STATEMENT_TIMEOUT_MS },
    });
  });
  afterAll(() => harness?.close());

  it("gets its slow searches refused (400 tooMany, 503 busy) while another organization's lookups never wait behind them", async () => {
    const noisy = await harness.tenant();
    const quiet = await harness.tenant();
    await quiet.post('/Users', { userName: 'quiet@corp.example' }).expect(201);
    // Users at the length limit, written directly (on a connection without the time limit): 80 MB
    // of display names to scan per comparison.
    const seeding = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await seeding.connect();
    try {
      await seeding.query(`set search_path to ${harness.database.schema}`);
      await seeding.query(
        `insert into users (org_id, id, user_name, display_name, active, data, created_at, updated_at)
         select $1::uuid, gen_random_uuid(), 'fat' || i, repeat(md5(i::text), $2), true,
           jsonb_build_object('userName', 'fat' || i, 'displayName', repeat(md5(i::text), $2), 'active', true),
           now(), now()
         from generate_series(1, $3) as i`,
        [noisy.orgId, STRING_MAX_LENGTH / 32, FAT_USERS],
      );
    } finally {
      await seeding.end();
    }

    const started = performance.now();
    const storm = Promise.all(
      Array.from({ length: 12 }, () => noisy.get(`/Users?filter=${substringSearch(MAX_FILTER_TERMS)}`)),
    );
    // Let the storm take its share before the other organization starts.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const took = await lookups(quiet, 'quiet@corp.example', 40);
    const searched = await storm;
    const stormMs = performance.now() - started;

    const statuses = searched.map((r) => `${r.status} ${r.body.scimType ?? ''}`.trim());
    expect(statuses.every((s) => s === '400 tooMany' || s === '503' || s === '200')).toBe(true);
    expect(statuses.some((s) => s === '400 tooMany')).toBe(true);
    expect(searched.filter((r) => r.status === 503).every((r) => Number(r.headers['retry-after']) > 0)).toBe(
      true,
    );
    console.log(
      `noisy searches: ${statuses.join(', ')} in ${(stormMs / 1000).toFixed(1)} s; quiet lookups: ` +
        `p50 ${percentile(took, 50).toFixed(1)} ms, p99 ${percentile(took, 99).toFixed(1)} ms, max ${Math.max(...took).toFixed(1)} ms`,
    );
    // Queued behind the noisy searches, a lookup would wait for one to end, up to the time limit
    // (without the per-organization share the slowest lookup took about 1,000 ms).
    expect(Math.max(...took)).toBeLessThan(STATEMENT_TIMEOUT_MS / 2);
    expect((await harness.http.get('/readyz')).status).toBe(200);
  });
});
