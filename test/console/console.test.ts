// The console over HTTP on a real database: its security (CSP, cookies, CSRF, sessions that end),
// the operator's actions through the admin services and the audit log, setup links (stored hashed,
// limited to their organization, dead at expiry or revocation), and the operator's brand on the pages
// a link opens (CONSOLE_BRAND_*). The browser journeys are in journeys.test.ts.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { pino } from 'pino';
import supertest from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { readConfig } from '../../src/config.js';
import { brandStylesheet, loadBrand } from '../../src/console/brand.js';
import { FailureThrottle } from '../../src/http/failure-throttle.js';
import { ADMIN_TOKEN, type Harness, PUBLIC_URL, useHarness } from '../helpers/harness.js';
import { GROUP, type Json, SCIM_JSON, USER } from '../helpers/scim.js';

let harness: Harness;
useHarness((h) => {
  harness = h;
});

/** The cookie a response set, as a Cookie header value. */
function cookieOf(res: supertest.Response, name: string): string {
  const set = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
  const line = set.find((c) => c.startsWith(`${name}=`));
  if (!line) throw new Error(`no ${name} cookie in ${JSON.stringify(set)}`);
  return line.split(';')[0]!;
}

const csrfIn = (page: string) => /name="_csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';

interface Browser {
  cookie: string;
  csrf: string;
  get(path: string): supertest.Test;
  post(path: string, fields?: Record<string, string | string[]>): supertest.Test;
}

function browser(cookie: string, csrf: string): Browser {
  return {
    cookie,
    csrf,
    get: (path) => harness.http.get(path).set('Cookie', cookie),
    post: (path, fields = {}) =>
      harness.http
        .post(path)
        .set('Cookie', cookie)
        .type('form')
        .send({ _csrf: csrf, ...fields }),
  };
}

async function signIn(): Promise<Browser> {
  const res = await harness.http
    .post('/console/sign-in')
    .type('form')
    .send({ adminToken: ADMIN_TOKEN })
    .expect(303);
  expect(res.headers.location).toBe('/console');
  const cookie = cookieOf(res, 'scimd_console');
  const page = await harness.http.get('/console').set('Cookie', cookie).expect(200);
  return browser(cookie, csrfIn(page.text));
}

async function auditOf(orgId: string): Promise<Json[]> {
  return (await harness.admin('get', `/orgs/${orgId}/events?limit=100`).expect(200)).body.events;
}

async function newSetupLink(orgId: string): Promise<{ id: string; url: string }> {
  const res = await harness.admin('post', `/orgs/${orgId}/setup-links`).send({ note: 'for IT' }).expect(201);
  return res.body;
}

/** Opens a setup link as an IT admin does (its page, then Continue): the secret becomes a session cookie. */
async function openLink(url: string): Promise<Browser> {
  const landing = await harness.http.get(new URL(url).pathname).expect(200);
  expect(landing.text).toContain('<button>Continue</button>');
  const res = await harness.http.post(new URL(url).pathname).type('form').send({}).expect(303);
  expect(res.headers.location).toBe('/console/setup');
  const cookie = cookieOf(res, 'scimd_setup');
  const page = await harness.http.get('/console/setup/entra').set('Cookie', cookie).expect(200);
  return browser(cookie, csrfIn(page.text));
}

describe('console security', () => {
  it('serves pages with a strict Content-Security-Policy, and no inline script, style or handler', async () => {
    const op = await signIn();
    const org = await harness.createOrg({ name: 'Acme' });
    for (const path of [
      '/console/sign-in',
      '/console',
      `/console/orgs/${org.id}`,
      `/console/orgs/${org.id}/activity`,
    ]) {
      const res = path === '/console/sign-in' ? await harness.http.get(path) : await op.get(path);
      expect(res.status, path).toBe(200);
      expect(res.headers['content-security-policy']).toContain("script-src 'self'");
      expect(res.headers['content-security-policy']).toContain("default-src 'none'");
      expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.text).not.toMatch(/<script(?![^>]*\bsrc=)/);
      expect(res.text).not.toMatch(/\sstyle=|<style|\son[a-z]+=/);
    }
    const script = await harness.http.get('/console/assets/console.js').expect(200);
    expect(script.headers['content-type']).toMatch(/^text\/javascript/);
    await harness.http
      .get('/console/assets/console.js')
      .set('If-None-Match', script.headers.etag!)
      .expect(304);
    await harness.http.get('/console/assets/console.css').expect('Content-Type', /^text\/css/);
    await harness.http.get('/console/assets/nothing.js').expect(404);
  });

  it('asks for the admin token, and keeps the session in an HttpOnly, SameSite=Strict, Secure cookie', async () => {
    const away = await harness.http.get('/console').expect(302);
    expect(away.headers.location).toBe('/console/sign-in');
    const wrong = await harness.http
      .post('/console/sign-in')
      .type('form')
      .send({ adminToken: 'nope' })
      .expect(401);
    expect(wrong.text).toContain('not this scimd’s admin token');
    expect(wrong.headers['set-cookie']).toBeUndefined();

    const res = await harness.http
      .post('/console/sign-in')
      .type('form')
      .send({ adminToken: ADMIN_TOKEN })
      .expect(303);
    const line = ([] as string[]).concat(res.headers['set-cookie'] ?? [])[0]!;
    expect(line).toMatch(/^scimd_console=scimdsession_[\w-]{40,};/);
    expect(line).toContain('HttpOnly');
    expect(line).toContain('SameSite=Strict');
    expect(line).toContain('Path=/console');
    expect(line).toContain('Max-Age=28800');
    expect(PUBLIC_URL.startsWith('https:')).toBe(true);
    expect(line).toContain('Secure');
    // Only the hash of the cookie's secret is stored.
    const secret = line.split(';')[0]!.split('=')[1]!;
    const rows = await sql<{
      row: string;
    }>`select row_to_json(s)::text as row from console_sessions s`.execute(harness.database.db);
    expect(rows.rows.length).toBeGreaterThan(0);
    for (const { row } of rows.rows) expect(row).not.toContain(secret.slice('scimdsession_'.length));
  });

  it('refuses a form without its CSRF token, or posted from another site', async () => {
    const op = await signIn();
    const before = (await harness.admin('get', '/orgs').expect(200)).body.orgs.length;
    const noToken = await harness.http
      .post('/console/orgs')
      .set('Cookie', op.cookie)
      .type('form')
      .send({ name: 'Forged' })
      .expect(403);
    expect(noToken.text).toContain('The form has expired');
    await op.post('/console/orgs', { _csrf: 'x'.repeat(43), name: 'Forged' }).expect(403);
    await op
      .post('/console/orgs', { name: 'Forged' })
      .set('Host', new URL(PUBLIC_URL).host)
      .set('Origin', 'https://evil.example')
      .expect(403);
    // Another session's token is not this one's.
    const other = await signIn();
    await op.post('/console/orgs', { _csrf: other.csrf, name: 'Forged' }).expect(403);
    expect((await harness.admin('get', '/orgs').expect(200)).body.orgs).toHaveLength(before);
    await op.post('/console/orgs', { name: 'Real' }).set('Origin', new URL(PUBLIC_URL).origin).expect(303);
  });

  it('answers odd form fields and filters with 4xx, never 500, and matches paths exactly', async () => {
    const odd = await harness.http
      .post('/console/sign-in')
      .type('form')
      .send('adminToken[a]=1&adminToken[b]=2');
    expect(odd.status).toBe(401);
    const op = await signIn();
    const t = await harness.tenant();
    await op.post(`/console/orgs/${t.orgId}/tokens`, { 'scopes[0][x]': 'y' }).expect(400);
    await op.post(`/console/orgs/${t.orgId}/setup-links`, { expiresInHours: 'soon' }).expect(400);
    await op.get(`/console/orgs/${t.orgId}/activity?since=yesterday`).expect(400);
    await op.get(`/console/orgs/${t.orgId}/activity?since=2026-11-26T09:30Z`).expect(400);
    await op.get(`/console/orgs/${t.orgId}/activity?since=2026-11-26T09:30`).expect(200);
    await op.get('/console/SETUP/okta').expect(404);
    await op.get(`/console/ORGS/${t.orgId}`).expect(404);
  });

  it('names SCIMD_ADMIN_TOKEN and the token file on the sign-in page', async () => {
    const page = await harness.http.get('/console/sign-in').expect(200);
    expect(page.text).toContain('<code>SCIMD_ADMIN_TOKEN</code>');
    expect(page.text).toContain('data/admin-token');
    expect(page.text).not.toMatch(/[^_]ADMIN_TOKEN/);
  });

  it('answers repeated wrong sign-ins from one client with 429 and Retry-After for a while', async () => {
    let now = 1_800_000_000_000;
    const app = createApp({
      database: harness.database,
      publicUrl: PUBLIC_URL,
      adminToken: ADMIN_TOKEN,
      logger: pino({ level: 'silent' }),
      signInThrottle: new FailureThrottle({ limit: 5, windowMs: 300_000, now: () => now }),
    });
    const signIn = (adminToken: string) =>
      supertest(app.callback()).post('/console/sign-in').type('form').send({ adminToken });
    for (let n = 0; n < 5; n++) {
      await signIn(`wrong-${n}`).expect(401);
      now += 1_000;
    }
    const refused = await signIn(ADMIN_TOKEN).expect(429);
    expect(refused.headers['retry-after']).toBe('295');
    expect(refused.text).toContain('Too many wrong admin tokens');
    expect(refused.headers['set-cookie']).toBeUndefined();
    now += 295_000;
    await signIn(ADMIN_TOKEN).expect(303);
  });

  it('ends an operator’s sessions when the admin token changes', async () => {
    const op = await signIn();
    const other = createApp({
      database: harness.database,
      publicUrl: PUBLIC_URL,
      adminToken: 'a-new-admin-token-0123456789abcdefghij',
      logger: pino({ level: 'silent' }),
    });
    await supertest(other.callback()).get('/console').set('Cookie', op.cookie).expect(302);
    await op.get('/console').expect(200);
  });

  it('ends a session at sign-out and at expiry', async () => {
    const op = await signIn();
    const out = await op.post('/console/sign-out').expect(303);
    expect(cookieOf(out, 'scimd_console')).toBe('scimd_console=');
    await op.get('/console').expect(302);

    const late = await signIn();
    await sql`update console_sessions set expires_at = now() - interval '1 second'`.execute(
      harness.database.db,
    );
    await late.get('/console').expect(302);
    await late.post('/console/orgs', { name: 'Late' }).expect(401);
  });
});

describe('console: an operator', () => {
  it('creates an organization, a token shown once, and a setup link, each in the audit log under the session', async () => {
    const op = await signIn();
    const created = await op.post('/console/orgs', { name: 'Globex', groupSync: 'true' }).expect(303);
    const orgId = /\/console\/orgs\/([0-9a-f-]{36})$/.exec(created.headers.location!)![1]!;
    const page = await op.get(`/console/orgs/${orgId}`).expect(200);
    expect(page.text).toContain(`${PUBLIC_URL}/scim/v2/${orgId}`);
    expect(page.text).toContain('Never connected');

    const withToken = await op
      .post(`/console/orgs/${orgId}/tokens`, { name: 'Okta production', scopes: ['users', 'groups'] })
      .expect(200);
    const secret = /(scimd_[\w-]{43})/.exec(withToken.text)![1]!;
    expect(withToken.text).toContain('shown this once');
    const tenant = await harness.tenantOf(orgId, secret);
    await tenant.post('/Users', { schemas: [USER], userName: 'ada@globex.example' }).expect(201);
    // The token's page afterwards lists it without its secret.
    const again = await op.get(`/console/orgs/${orgId}`).expect(200);
    expect(again.text).toContain('Okta production');
    expect(again.text).not.toContain(secret);
    expect(again.text).toContain('Healthy');

    const withLink = await op
      .post(`/console/orgs/${orgId}/setup-links`, { expiresInHours: '24', note: 'Globex IT' })
      .expect(200);
    expect(withLink.text).toMatch(/\/console\/link\/scimdsetup_[\w-]{43}/);

    const events = await auditOf(orgId);
    const session = (await harness.database.db.selectFrom('console_sessions').select('id').execute()).map(
      (s) => `console:${s.id}`,
    );
    const byAction = Object.fromEntries(events.map((e) => [e.action, e]));
    for (const action of ['org.create', 'token.create', 'setup_link.create']) {
      expect(byAction[action], action).toBeDefined();
      expect(session).toContain(byAction[action].actor);
      expect(byAction[action].status).toBe(201);
    }
    expect(byAction['token.create'].resourceType).toBe('Token');
    expect(byAction['setup_link.create'].resourceType).toBe('SetupLink');
    expect(JSON.stringify(events)).not.toContain(secret);
  });

  it('rotates a token, and revokes the old one only once the new one has served, unless forced', async () => {
    const op = await signIn();
    const org = await harness.createOrg({ name: 'Initech' });
    await harness.createToken(org.id, { name: 'entra' });
    const [token] = (await harness.admin('get', `/orgs/${org.id}/tokens`).expect(200)).body.tokens;
    const rotated = await op
      .post(`/console/orgs/${org.id}/tokens/${token.id}/rotate`, { overlapSeconds: '' })
      .expect(200);
    expect(rotated.text).toMatch(/scimd_[\w-]{43}/);
    const guarded = await op.post(`/console/orgs/${org.id}/tokens/${token.id}/revoke`).expect(409);
    expect(guarded.text).toContain('has not served a successful request yet');
    await op.post(`/console/orgs/${org.id}/tokens/${token.id}/revoke`, { force: 'true' }).expect(303);
    const tokens = (await harness.admin('get', `/orgs/${org.id}/tokens`).expect(200)).body.tokens;
    expect(tokens.find((t: Json) => t.id === token.id).revokedAt).not.toBeNull();
    const actions = (await auditOf(org.id)).map((e) => `${e.action} ${e.status}`);
    expect(actions).toEqual(
      expect.arrayContaining(['token.rotate 200', 'token.revoke 409', 'token.revoke 200']),
    );
  });

  it('changes settings, and reads activity, schemas and webhooks', async () => {
    const op = await signIn();
    const t = await harness.tenant();
    await harness
      .admin('put', `/orgs/${t.orgId}/schemas/urn:ietf:params:scim:schemas:extension:acme:2.0:User`)
      .send({
        id: 'urn:ietf:params:scim:schemas:extension:acme:2.0:User',
        name: 'Acme',
        attributes: [{ name: 'costCenter', type: 'string' }],
      })
      .expect(201);
    await op
      .post(`/console/orgs/${t.orgId}/settings`, { name: 'Renamed', deprovisioning: 'delete' })
      .expect(303);
    const org = (await harness.admin('get', `/orgs/${t.orgId}`).expect(200)).body;
    expect(org).toMatchObject({ name: 'Renamed', groupSync: false, deprovisioning: 'delete' });
    const page = await op.get(`/console/orgs/${t.orgId}?done=settings`).expect(200);
    expect(page.text).toContain('Settings saved.');
    expect(page.text).toContain('costCenter');

    await t.post('/Users', { schemas: [USER], userName: 'dup@example.com' }).expect(201);
    await t.post('/Users', { schemas: [USER], userName: 'dup@example.com' }).expect(409);
    const activity = await op.get(`/console/orgs/${t.orgId}/activity`).expect(200);
    expect(activity.text).toContain('POST /Users');
    expect(activity.text).toContain('uniqueness');
    expect(activity.text).toContain('What to do:');
    expect(activity.text).toContain('org.update');
    expect(activity.text).toContain('user.create');
    const filtered = await op.get(`/console/orgs/${t.orgId}/activity?resourceId=${t.orgId}`).expect(200);
    expect(filtered.text).toContain('<div>org.update</div>');
    expect(filtered.text).not.toContain('<div>user.create</div>');

    const hook = await harness
      .admin('post', '/webhooks')
      .send({ url: 'https://hooks.example.com/scimd', events: ['user.created'], orgId: t.orgId })
      .expect(201);
    const list = await op.get('/console/webhooks').expect(200);
    expect(list.text).toContain('https://hooks.example.com/scimd');
    const deliveries = await op.get(`/console/webhooks/${hook.body.id}`).expect(200);
    expect(deliveries.text).toContain(
      'Deliveries to <span class="long">https://hooks.example.com/scimd</span>',
    );
    expect(deliveries.text).not.toContain(hook.body.secret);
  });

  it('answers a missing organization with a 404 page, and bad input with a 400 page', async () => {
    const op = await signIn();
    await op.get('/console/orgs/00000000-0000-4000-8000-000000000000').expect(404);
    const bad = await op.post('/console/orgs', { name: '' }).expect(400);
    expect(bad.text).toContain('name');
    await op.get('/console/nowhere').expect(404);
  });
});

describe('console: a setup link', () => {
  it('is stored hashed, opens into a session of its organization only, and creates tokens there', async () => {
    const mine = await harness.createOrg({ name: 'Hooli', groupSync: true });
    const other = await harness.createOrg({ name: 'Other' });
    const link = await newSetupLink(mine.id);
    // Fetching the link (a mail scanner, a preview) opens nothing.
    await harness.http.get(new URL(link.url).pathname).expect(200);
    const [unopened] = (await harness.admin('get', `/orgs/${mine.id}/setup-links`).expect(200)).body
      .setupLinks;
    expect(unopened.lastOpenedAt).toBeNull();
    await harness.http
      .post(new URL(link.url).pathname)
      .set('Host', new URL(PUBLIC_URL).host)
      .set('Origin', 'https://evil.example')
      .type('form')
      .send({})
      .expect(403);
    const secret = new URL(link.url).pathname.split('/').at(-1)!;
    expect(link.url.startsWith(`${PUBLIC_URL}/console/link/scimdsetup_`)).toBe(true);
    const stored = await sql<{ row: string }>`select row_to_json(l)::text as row from setup_links l`.execute(
      harness.database.db,
    );
    for (const { row } of stored.rows) expect(row).not.toContain(secret.slice(20));

    const itAdmin = await openLink(link.url);
    const home = await itAdmin.get('/console/setup').expect(200);
    expect(home.text).toContain('Hooli');
    expect(home.text).not.toContain('Other');
    const entra = await itAdmin.get('/console/setup/entra').expect(200);
    expect(entra.text).toContain(`${mine.scimBaseUrl}?aadOptscim062020`);
    const okta = await itAdmin.get('/console/setup/okta').expect(200);
    expect(okta.text).toContain(mine.scimBaseUrl);
    expect(okta.text).toContain('userName');
    await itAdmin.get('/console/setup/onelogin').expect(404);

    const revealed = await itAdmin.post('/console/setup/entra/token').expect(200);
    const token = /(scimd_[\w-]{43})/.exec(revealed.text)![1]!;
    const tenant = await harness.tenantOf(mine.id, token);
    await tenant.get('/Users').expect(200);
    const elsewhere = await harness.tenantOf(other.id, token);
    await elsewhere.get('/Users').expect(401);

    // The link's session is no operator's.
    await harness.http.get('/console').set('Cookie', itAdmin.cookie).expect(302);
    await harness.http.get(`/console/orgs/${mine.id}`).set('Cookie', itAdmin.cookie).expect(302);
    const actors = (await auditOf(mine.id))
      .filter((e) => e.actor === `setup_link:${link.id}`)
      .map((e) => e.action);
    expect(actors).toEqual(expect.arrayContaining(['setup_link.open', 'token.create']));
    expect(JSON.stringify(await auditOf(mine.id))).not.toContain(token);
  });

  it('shows the connection waiting, then connected, then a failed request with its hint', async () => {
    const org = await harness.createOrg({ name: 'Pied Piper' });
    const itAdmin = await openLink((await newSetupLink(org.id)).url);
    const waiting = await itAdmin.get('/console/setup/status').expect(200);
    expect(waiting.text).toContain('data-state="waiting"');

    const token = /(scimd_[\w-]{43})/.exec(
      (await itAdmin.post('/console/setup/entra/token').expect(200)).text,
    )![1]!;
    const tenant = await harness.tenantOf(org.id, token);
    await tenant.get('/Users?filter=userName%20eq%20%22x%40example.com%22').expect(200);
    const connected = await itAdmin.get('/console/setup/status').expect(200);
    expect(connected.text).toContain('data-state="connected"');

    await tenant
      .post('/Groups', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'g' })
      .expect(403);
    const failed = await itAdmin.get('/console/setup/status').expect(200);
    expect(failed.text).toContain('POST /Groups');
    expect(failed.text).toContain('What to do:');
    expect(failed.text).toContain('data-state="connected"');
  });

  it('stops working when revoked or expired, and its sessions with it', async () => {
    const org = await harness.createOrg({ name: 'Massive Dynamic' });
    const link = await newSetupLink(org.id);
    const itAdmin = await openLink(link.url);
    await itAdmin.get('/console/setup').expect(200);
    const revoked = await harness.admin('post', `/orgs/${org.id}/setup-links/${link.id}/revoke`).expect(200);
    expect(revoked.body.state).toBe('revoked');
    await itAdmin.get('/console/setup').expect(401);
    await itAdmin.post('/console/setup/entra/token').expect(401);
    await harness.http.post(new URL(link.url).pathname).type('form').send({}).expect(404);
    const gone = await harness.http.get(new URL(link.url).pathname).expect(404);
    expect(gone.text).toContain('This setup link does not work');

    const late = await newSetupLink(org.id);
    const lateSession = await openLink(late.url);
    await sql`update setup_links set expires_at = now() - interval '1 second' where id = ${late.id}`.execute(
      harness.database.db,
    );
    await lateSession.get('/console/setup').expect(401);
    await harness.http.get(new URL(late.url).pathname).expect(404);
    await harness.http.get('/console/link/scimdsetup_not-a-real-link-at-all-0123456789abcdef').expect(404);

    const listed = (await harness.admin('get', `/orgs/${org.id}/setup-links`).expect(200)).body.setupLinks;
    expect(listed.map((l: Json) => [l.id, l.state])).toEqual(
      expect.arrayContaining([
        [link.id, 'revoked'],
        [late.id, 'expired'],
      ]),
    );
    expect(JSON.stringify(listed)).not.toContain('/console/link/');
    const actions = (await auditOf(org.id)).filter((e) => e.actor === 'admin').map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['setup_link.create', 'setup_link.revoke']));
  });

  it('never reaches the log: the request line names the link’s path without its secret', async () => {
    const org = await harness.createOrg({ name: 'Soylent' });
    const link = await newSetupLink(org.id);
    const lines: string[] = [];
    const app = createApp({
      database: harness.database,
      publicUrl: PUBLIC_URL,
      adminToken: ADMIN_TOKEN,
      logger: pino({ level: 'info' }, { write: (line: string) => lines.push(line) }),
    });
    const path = new URL(link.url).pathname;
    await supertest(app.callback()).get(path).expect(200);
    await supertest(app.callback()).post(path).type('form').send({}).expect(303);
    await supertest(app.callback()).get(`${path}x`).expect(404);
    const secret = path.split('/').at(-1)!;
    expect(lines.some((l) => l.includes('/console/link/[redacted]'))).toBe(true);
    for (const line of lines) expect(line).not.toContain(secret.slice(11, 30));
  });

  it('is refused for a missing organization, a life too long, or an unknown link', async () => {
    await harness
      .admin('post', '/orgs/00000000-0000-4000-8000-000000000000/setup-links')
      .send({})
      .expect(404);
    const org = await harness.createOrg({ name: 'Umbrella' });
    await harness.admin('post', `/orgs/${org.id}/setup-links`).send({ expiresInHours: 721 }).expect(400);
    await harness
      .admin('post', `/orgs/${org.id}/setup-links/00000000-0000-4000-8000-000000000000/revoke`)
      .expect(404);
  });
});

describe('console: asking before revoking', () => {
  const tokensOf = async (orgId: string): Promise<Json[]> =>
    (await harness.admin('get', `/orgs/${orgId}/tokens`).expect(200)).body.tokens;

  it('answers a revoke of a token used in the last day without `confirm` with a page asking, and revokes nothing', async () => {
    const op = await signIn();
    const t = await harness.tenant();
    await t.get('/Users').expect(200);
    const [token] = await tokensOf(t.orgId);
    const listed = await op.get(`/console/orgs/${t.orgId}`).expect(200);
    expect(listed.text).toContain(`data-confirm="Revoke the token “${token.name}”?"`);

    const asked = await op.post(`/console/orgs/${t.orgId}/tokens/${token.id}/revoke`).expect(200);
    expect(asked.text).toContain(`<h1>Revoke the token “${token.name}”?</h1>`);
    expect(asked.text).toMatch(/It was last used (just now|\d+ minutes? ago)/);
    expect(asked.text).toContain('<input type="hidden" name="confirm" value="true">');
    expect((await tokensOf(t.orgId))[0].revokedAt).toBeNull();
    expect((await auditOf(t.orgId)).map((e) => e.action)).not.toContain('token.revoke');

    await op.post(`/console/orgs/${t.orgId}/tokens/${token.id}/revoke`, { confirm: 'true' }).expect(303);
    expect((await tokensOf(t.orgId))[0].revokedAt).not.toBeNull();
    const revokes = (await auditOf(t.orgId)).filter((e) => e.action === 'token.revoke');
    expect(revokes.map((e) => e.status)).toEqual([200]);
  });

  it('revokes at once a token that has not been used for a day', async () => {
    const op = await signIn();
    const t = await harness.tenant();
    await t.get('/Users').expect(200);
    const [token] = await tokensOf(t.orgId);
    // The page writes the use it was waiting to write; then the use is made a day old.
    await op.get(`/console/orgs/${t.orgId}`).expect(200);
    await sql`update scim_tokens set last_used_at = now() - interval '25 hours' where id = ${token.id}`.execute(
      harness.database.db,
    );
    const page = await op.get(`/console/orgs/${t.orgId}`).expect(200);
    expect(page.text).not.toContain('data-confirm=');
    await op.post(`/console/orgs/${t.orgId}/tokens/${token.id}/revoke`).expect(303);
    expect((await tokensOf(t.orgId))[0].revokedAt).not.toBeNull();
  });

  it('asks before revoking a setup link, naming it and saying when it was last opened', async () => {
    const op = await signIn();
    const org = await harness.createOrg({ name: 'Vandelay' });
    const link = await newSetupLink(org.id);
    const asked = await op.post(`/console/orgs/${org.id}/setup-links/${link.id}/revoke`).expect(200);
    expect(asked.text).toMatch(
      /<h1>Revoke the setup link <code>scimdsetup_[\w-]+…<\/code> \(for IT\)\?<\/h1>/,
    );
    expect(asked.text).toContain('It has not been opened yet.');
    const listed = async () =>
      (await harness.admin('get', `/orgs/${org.id}/setup-links`).expect(200)).body.setupLinks[0];
    expect((await listed()).state).toBe('active');

    await op.post(`/console/orgs/${org.id}/setup-links/${link.id}/revoke`, { confirm: 'true' }).expect(303);
    expect((await listed()).state).toBe('revoked');
  });
});

describe('console: the audit log', () => {
  /** A page's text without its tags (so without the ids in its links). */
  const textOf = (page: string) => page.replace(/<[^>]*>/g, '');

  it('names tokens and setup links, a deleted token as such, and counts in words', async () => {
    const op = await signIn();
    const org = await harness.createOrg({ name: 'Kramerica', groupSync: true });
    const secret = await harness.createToken(org.id, { name: 'Okta production' });
    const tenant = await harness.tenantOf(org.id, secret);
    await tenant.post('/Users', { schemas: [USER], userName: 'kramer@example.com' }).expect(201);
    await tenant
      .post('/Groups', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'Sales' })
      .expect(201);
    const link = await newSetupLink(org.id);
    await openLink(link.url);
    const [token] = (await harness.admin('get', `/orgs/${org.id}/tokens`).expect(200)).body.tokens;

    const activity = textOf((await op.get(`/console/orgs/${org.id}/activity`).expect(200)).text);
    expect(activity).toContain('token “Okta production”');
    expect(activity).toContain('an IT admin, with setup link “for IT”');
    expect(activity).toContain('the admin API');
    expect(activity).not.toContain(token.id);
    expect(activity).not.toContain(link.id);
    const orgPage = textOf((await op.get(`/console/orgs/${org.id}`).expect(200)).text);
    expect(orgPage).toContain('1 active user, 0 inactive users, 0 deprovisioned users; 1 group');

    await sql`delete from scim_tokens where id = ${token.id}`.execute(harness.database.db);
    const after = textOf((await op.get(`/console/orgs/${org.id}/activity`).expect(200)).text);
    expect(after).toContain(`a deleted token ${token.id.slice(0, 8)}…`);
    expect(after).not.toContain('Okta production');
  });
});

describe('console: the operator’s brand on a customer’s pages', () => {
  const PNG = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
    'base64',
  );
  const dir = mkdtempSync(join(tmpdir(), 'scimd-brand-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, body: string | Buffer) => {
    const path = join(dir, name);
    writeFileSync(path, body);
    return path;
  };
  const brandSettings = (env: Record<string, string>) => readConfig(env).consoleBrand;

  /** An app on the harness's database with a white label, its SCIM API and setup pages driven alike. */
  function brandedApp() {
    const app = createApp({
      database: harness.database,
      publicUrl: PUBLIC_URL,
      adminToken: ADMIN_TOKEN,
      logger: pino({ level: 'silent' }),
      brand: loadBrand(
        brandSettings({
          CONSOLE_BRAND_NAME: 'Acme Cloud',
          CONSOLE_BRAND_COLOR: '#6D28D9',
          CONSOLE_BRAND_LOGO: file('logo.png', PNG),
        }),
      ),
    });
    return supertest(app.callback());
  }

  /** Opens a setup link on `http`; the pages on the way are returned for the test to read. */
  async function openOn(http: ReturnType<typeof supertest>, url: string) {
    const path = new URL(url).pathname;
    const landing = await http.get(path).expect(200);
    const opened = await http.post(path).type('form').send({}).expect(303);
    const cookie = cookieOf(opened, 'scimd_setup');
    const get = (to: string) => http.get(to).set('Cookie', cookie);
    const csrf = csrfIn((await get('/console/setup/okta').expect(200)).text);
    const post = (to: string) => http.post(to).set('Cookie', cookie).type('form').send({ _csrf: csrf });
    return { landing, get, post };
  }

  /** Nothing on a customer's page names scimd or leads to the operator's console. */
  function expectCustomerPage(text: string, brandName: string, where: string) {
    expect(text, where).toContain(`<title>`);
    expect(text, where).toMatch(new RegExp(`<title>[^<]* · ${brandName}</title>`));
    expect(text, where).not.toMatch(/scimd/i);
    expect(text, where).not.toMatch(/href="\/console(\/sign-in|\/orgs|\/webhooks)?"/);
    expect(text, where).toContain('body class="setup"');
  }

  it('shows its name, logo and colour on every page a setup link opens, and never scimd', async () => {
    const http = brandedApp();
    const org = await harness.createOrg({ name: 'Initech', groupSync: false });
    const { url } = await newSetupLink(org.id);
    const itAdmin = await openOn(http, url);
    const token = /(scimd_[\w-]{43})/.exec(
      (await itAdmin.post('/console/setup/okta/token').expect(200)).text,
    )![1]!;
    const scim = (method: 'get' | 'post', path: string) =>
      http[method](`/scim/v2/${org.id}${path}`).set('Authorization', `Bearer ${token}`).type(SCIM_JSON);
    await scim('get', '/Users?startIndex=1&count=1').expect(200);
    await scim('post', '/Users')
      .send({ schemas: [USER], userName: 'ada@initech.example' })
      .expect(201);
    // Failures whose hints an IT admin reads: a duplicate, groups while group sync is off, Bulk.
    await scim('post', '/Users')
      .send({ schemas: [USER], userName: 'ada@initech.example' })
      .expect(409);
    await scim('post', '/Groups')
      .send({ schemas: [GROUP], displayName: 'Staff' })
      .expect(403);
    await scim('post', '/Bulk').send({}).expect(501);

    const revealed = await itAdmin.post('/console/setup/entra/token').expect(200);
    const secret = /(scimd_[\w-]{43})/.exec(revealed.text)![1]!;
    const pages: [string, string][] = [
      ['the link', itAdmin.landing.text],
      ['home', (await itAdmin.get('/console/setup').expect(200)).text],
      ['Okta', (await itAdmin.get('/console/setup/okta').expect(200)).text],
      ['Entra', (await itAdmin.get('/console/setup/entra').expect(200)).text],
      // The token is the one thing named scimd_ (secret scanners know the prefix).
      ['a token revealed', revealed.text.replace(secret, '')],
      ['no such IdP', (await itAdmin.get('/console/setup/onelogin').expect(404)).text],
      ['without a session', (await http.get('/console/setup').expect(401)).text],
      ['a link that does not work', (await http.get(`${new URL(url).pathname}x`).expect(404)).text],
    ];
    for (const [where, text] of pages) {
      expectCustomerPage(text, 'Acme Cloud', where);
      expect(text, where).toContain(
        '<img class="brand-logo" src="/console/assets/logo.png" alt="Acme Cloud">',
      );
      expect(text, where).toContain('<link rel="stylesheet" href="/console/assets/brand.css">');
    }
    const status = (await itAdmin.get('/console/setup/status').expect(200)).text;
    expect(status).toContain('data-state="connected"');
    expect(status).toContain('1 user received so far.');
    expect(status).toContain('this service already has');
    expect(status).toContain('what this service does not offer');
    expect(status).not.toMatch(/scimd/i);
    // The link's page posts back to where it was opened: its secret is not in the page.
    expect(itAdmin.landing.text).toContain('<form method="post"><button>Continue</button></form>');

    const logo = await http.get('/console/assets/logo.png').expect(200);
    expect(logo.headers['content-type']).toBe('image/png');
    expect(Buffer.compare(logo.body as Buffer, PNG)).toBe(0);
    const css = await http.get('/console/assets/brand.css').expect(200);
    expect(css.headers['content-type']).toMatch(/^text\/css/);
    expect(css.text).toContain('--brand: #6d28d9;');
    // Violet keeps 4.5:1 on white: links and buttons take it too, with white text on it.
    expect(css.text).toContain('--accent: #6d28d9;');
    expect(css.text).toContain('--brand-ink: #ffffff;');
    expect(css.text).toContain('url("logo.png")');
  });

  it('shows a neutral name without a brand, and the operator’s pages keep scimd with the brand beside it', async () => {
    const org = await harness.createOrg({ name: 'Vandelay' });
    const itAdmin = await openOn(harness.http, (await newSetupLink(org.id)).url);
    for (const path of [
      '/console/setup',
      '/console/setup/okta',
      '/console/setup/entra',
      '/console/setup/status',
    ]) {
      const text = (await itAdmin.get(path).expect(200)).text;
      expect(text, path).not.toMatch(/scimd/i);
      if (path !== '/console/setup/status') expectCustomerPage(text, 'Directory sync', path);
    }
    expectCustomerPage(itAdmin.landing.text, 'Directory sync', 'the link');
    await harness.http.get('/console/assets/logo.png').expect(404);
    const icon = await harness.http.get('/console/assets/directory.svg').expect(200);
    expect(icon.headers['content-type']).toBe('image/svg+xml');
    expect(String(icon.body)).not.toMatch(/scimd/i);
    const plain = await harness.http.get('/console/assets/brand.css').expect(200);
    expect(plain.text).not.toContain('--brand');

    const http = brandedApp();
    const signedIn = await http
      .post('/console/sign-in')
      .type('form')
      .send({ adminToken: ADMIN_TOKEN })
      .expect(303);
    const operator = await http
      .get('/console')
      .set('Cookie', cookieOf(signedIn, 'scimd_console'))
      .expect(200);
    expect(operator.text).toContain('<title>Organizations · scimd</title>');
    expect(operator.text).toContain('<span class="logo" aria-hidden="true"></span>scimd');
    expect(operator.text).toContain('/console/assets/brand.css');
  });

  it('lists the users and groups that arrived, newest first, ten of each, once a request succeeded', async () => {
    const org = await harness.createOrg({ name: 'Hooli XYZ', groupSync: true });
    const itAdmin = await openOn(harness.http, (await newSetupLink(org.id)).url);
    const before = (await itAdmin.get('/console/setup/status').expect(200)).text;
    expect(before).not.toContain('received so far');
    const token = /(scimd_[\w-]{43})/.exec(
      (await itAdmin.post('/console/setup/okta/token').expect(200)).text,
    )![1]!;
    const tenant = await harness.tenantOf(org.id, token);
    const ids: string[] = [];
    for (let n = 1; n <= 12; n++) {
      const created = await tenant
        .post('/Users', { schemas: [USER], userName: `user${n}@hooli.example`, displayName: `Person ${n}` })
        .expect(201);
      ids.push(created.body.id);
    }
    // A deprovisioned user is no longer one of the organization's.
    await tenant.delete(`/Users/${ids[11]}`).expect(204);
    await tenant.post('/Groups', { schemas: [GROUP], displayName: 'Engineering' }).expect(201);

    const status = (await itAdmin.get('/console/setup/status').expect(200)).text;
    expect(status).toContain('11 users and 1 group received so far.');
    expect(status).toContain('The newest 10 of 11 users.');
    const shown = [...status.matchAll(/<span class="who">Person (\d+)<\/span>/g)].map((m) => Number(m[1]));
    expect(shown).toEqual([11, 10, 9, 8, 7, 6, 5, 4, 3, 2]);
    expect(status).toContain('<code>user11@hooli.example</code>');
    expect(status).toContain('<span class="who">Engineering</span>');
    expect(status).not.toContain('The newest 1 of');
    expect(status).toMatch(/<time datetime="[^"]+">just now<\/time>/);
  });

  it('refuses to start with a colour that is not #rrggbb or #rgb, a long name, or a logo that is not an image', () => {
    for (const color of ['red', '#12345', 'rgb(0,0,0)', '#gggggg'])
      expect(() => readConfig({ CONSOLE_BRAND_COLOR: color }), color).toThrow(
        /CONSOLE_BRAND_COLOR must be a colour written #rrggbb or #rgb/,
      );
    expect(loadBrand(brandSettings({ CONSOLE_BRAND_COLOR: '#0AF' })).color).toBe('#00aaff');
    expect(() => readConfig({ CONSOLE_BRAND_NAME: 'x'.repeat(61) })).toThrow(
      /CONSOLE_BRAND_NAME must be at most 60/,
    );
    expect(() => readConfig({ CONSOLE_BRAND_NAME: 'Acme\nCloud' })).toThrow(/CONSOLE_BRAND_NAME/);
    expect(readConfig({}).consoleBrand).toEqual({ name: undefined, color: undefined, logoPath: undefined });

    const logo = (path: string) => () => loadBrand(brandSettings({ CONSOLE_BRAND_LOGO: path }));
    expect(logo(join(dir, 'missing.png'))).toThrow(/^CONSOLE_BRAND_LOGO .*missing\.png cannot be read$/);
    expect(logo(dir)).toThrow(/CONSOLE_BRAND_LOGO .* cannot be read|is not an SVG/);
    expect(logo(file('logo.txt', 'hello'))).toThrow(/is not an SVG, PNG, JPEG or WebP image/);
    expect(logo(file('fake.png', Buffer.concat([PNG.subarray(0, 8), Buffer.alloc(40)])))).toThrow(
      /is not an SVG, PNG, JPEG or WebP image/,
    );
    expect(logo(file('huge.png', Buffer.concat([PNG, Buffer.alloc(300 * 1024)])))).toThrow(
      /is 301 KiB; a logo may have at most 256 KiB/,
    );
    const svg = loadBrand(
      brandSettings({
        CONSOLE_BRAND_LOGO: file(
          'logo.svg',
          '<?xml version="1.0"?>\n<!-- Acme -->\n<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 160 40"></svg>',
        ),
      }),
    ).logo!;
    expect(svg).toMatchObject({ file: 'logo.svg', type: 'image/svg+xml', aspect: 4 });
    // A pale colour is the band and the step numbers' (with black on it), but not the links'.
    const pale = brandStylesheet(loadBrand(brandSettings({ CONSOLE_BRAND_COLOR: '#fde047' })));
    expect(pale).toContain('--brand-ink: #000000;');
    expect(pale).not.toContain('--accent');
  });
});
