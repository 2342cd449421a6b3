// The console's journeys in headless Chromium (Debian's `chromium`, driven by playwright-core):
// an operator creates an organization, a token and a setup link; an IT admin opens a link, chooses
// Entra, reveals a token, and watches Entra's first requests turn the indicator green and a failed
// request appear with its hint; the operator's pages ask before revoking, name tokens in the audit
// log, and fit a phone, each page they visit passing axe.ts's checks. Screenshots go to
// CONSOLE_SCREENSHOTS (the README's come from there).
// Under an operator's white label (CONSOLE_BRAND_*), IT admins connect Okta and Entra with the panel
// in view; CONSOLE_SCREENSHOTS=docs/images npx vitest run test/console/journeys.test.ts -t white-label
// renews docs/images/setup-okta.png and setup-phone.png.
// On those pages, an operator and an IT admin map groups to roles; `-t roles:` with the same
// CONSOLE_SCREENSHOTS renews docs/images/setup-roles.png and console-roles.png.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { type Browser, type BrowserContextOptions, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { loadBrand } from '../../src/console/brand.js';
import type { Database } from '../../src/db/database.js';
import { LIVE_ADMIN_TOKEN, useLiveServer } from '../conformance/live-server.js';
import { createTestDatabase } from '../helpers/database.js';
import { expectAccessible, expectNoSidewaysScroll, expectWholeWords } from './axe.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium && process.env.CONSOLE_BROWSER_REQUIRED === '1')
  throw new Error(`CONSOLE_BROWSER_REQUIRED is set, but there is no Chromium at ${CHROMIUM}`);

const SHOTS = process.env.CONSOLE_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), 'scimd-console-'));
mkdirSync(SHOTS, { recursive: true });
const LAPTOP = { width: 1280, height: 860 };
const PHONE = { width: 390, height: 844 };

/** What every page a journey visits must be (axe.ts): accessible, with no sideways scroll, no word broken. */
async function checkPage(page: Page): Promise<void> {
  await expectAccessible(page);
  await expectNoSidewaysScroll(page);
  await expectWholeWords(page);
}

describe.skipIf(!haveChromium)('the console in headless Chromium', () => {
  const live = useLiveServer();
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      // As root, Chromium's sandbox is unavailable; the rest keeps it off a closed network.
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${live.origin}/admin/v1${path}`, {
      method,
      headers: { Authorization: `Bearer ${LIVE_ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    expect(res.status, `${method} ${path}`).toBeLessThan(300);
    // biome-ignore lint/suspicious/noExplicitAny: the admin API's JSON, read by the test.
    return (await res.json()) as any;
  };

  /** A page that fails the test on any script error or refused resource (a CSP violation included). */
  async function newPage(
    viewport = LAPTOP,
    options: BrowserContextOptions = {},
  ): Promise<{ page: Page; problems: string[] }> {
    const context = await browser.newContext({ viewport, ...options });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    return { page, problems };
  }

  it('an operator signs in, creates an organization, a token and a setup link, and signs out', async () => {
    const { page, problems } = await newPage();
    await page.goto(`${live.origin}/console`);
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
    await checkPage(page);
    await page.getByLabel('Admin token').fill(LIVE_ADMIN_TOKEN);
    await page.keyboard.press('Enter');
    await page.waitForURL(`${live.origin}/console`);
    await checkPage(page);

    await page.getByLabel('Name').fill('Acme Corporation');
    await page.getByLabel('Group sync (accept groups from the IdP)').check();
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.waitForURL(/\/console\/orgs\/[0-9a-f-]{36}$/);
    const orgId = page.url().split('/').at(-1)!;
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Acme Corporation');
    expect(await page.locator('#base-url').textContent()).toBe(`${live.origin}/scim/v2/${orgId}`);

    await page.locator('form[action$="/tokens"]').getByLabel('Name').fill('Okta production');
    await page.getByRole('button', { name: 'Create token' }).click();
    const token = (await page.locator('#revealed-secret').textContent())!.trim();
    expect(token).toMatch(/^scimd_[\w-]{43}$/);
    const check = await fetch(`${live.origin}/scim/v2/${orgId}/Users`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(check.status).toBe(200);

    await page.getByLabel('Note').fill('for Acme’s IT team');
    await page.getByRole('button', { name: 'Create setup link' }).click();
    const link = (await page.locator('#revealed-secret').textContent())!.trim();
    expect(link).toMatch(new RegExp(`^${live.origin}/console/link/scimdsetup_[\\w-]{43}$`));
    await checkPage(page);
    await page.screenshot({ path: join(SHOTS, 'operator-organization.png'), fullPage: true });

    // The list of organizations shows its health at a glance.
    await page.getByRole('link', { name: 'Organizations' }).click();
    expect(await page.getByRole('row', { name: /Acme Corporation/ }).textContent()).toContain('Healthy');
    await checkPage(page);
    await page.screenshot({ path: join(SHOTS, 'operator-organizations.png'), fullPage: true });

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${live.origin}/console/sign-in`);
    await page.goto(`${live.origin}/console/orgs/${orgId}`);
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
    expect(problems).toEqual([]);
  });

  it('an IT admin opens a setup link, chooses Entra, reveals a token, and sees Entra connect and a failure’s hint', async () => {
    const org = await admin('POST', '/orgs', { name: 'Globex', groupSync: true });
    await admin('PUT', `/orgs/${org.id}/schemas/urn:ietf:params:scim:schemas:extension:globex:2.0:User`, {
      id: 'urn:ietf:params:scim:schemas:extension:globex:2.0:User',
      name: 'Globex',
      attributes: [{ name: 'costCenter', type: 'string' }],
    });
    const { url } = await admin('POST', `/orgs/${org.id}/setup-links`, { expiresInHours: 24 });

    const { page, problems } = await newPage();
    await page.goto(url);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(`${live.origin}/console/setup`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('Globex');
    await page.screenshot({ path: join(SHOTS, 'setup-choose.png'), fullPage: true });

    await page.getByRole('link', { name: 'Microsoft Entra ID' }).click();
    await page.waitForURL(`${live.origin}/console/setup/entra`);
    const tenantUrl = `${org.scimBaseUrl}?aadOptscim062020`;
    expect(await page.locator('main').textContent()).toContain(tenantUrl);
    expect(await page.locator('main').textContent()).toContain(
      'urn:ietf:params:scim:schemas:extension:globex:2.0:User:costCenter',
    );
    expect(await page.locator('#connection [data-state]').getAttribute('data-state')).toBe('waiting');

    await page.getByRole('button', { name: 'Generate a token' }).click();
    const token = (await page.locator('#revealed-secret').textContent())!.trim();
    expect(token).toMatch(/^scimd_[\w-]{43}$/);

    // Entra's Test Connection, then its first provisioning cycle for one user.
    const entra = (method: string, path: string, body?: unknown) =>
      fetch(`${org.scimBaseUrl}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${token}`,
          'Content-Type': 'application/scim+json',
          'User-Agent': 'Microsoft.AAD.Provisioning',
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    expect((await entra('GET', '/Users?filter=userName+eq+%2248c3a7b2-5f1e%22')).status).toBe(200);
    expect((await entra('GET', '/Users?filter=userName+eq+%22ada%40globex.example%22')).status).toBe(200);
    const created = await entra('POST', '/Users', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      externalId: 'ada',
      userName: 'ada@globex.example',
      active: true,
      displayName: 'Ada Lovelace',
      emails: [{ primary: true, type: 'work', value: 'ada@globex.example' }],
      name: { givenName: 'Ada', familyName: 'Lovelace' },
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };

    // The indicator turns green by itself.
    const state = page.locator('#connection [data-state]');
    await expect.poll(() => state.getAttribute('data-state'), { timeout: 20_000 }).toBe('connected');
    expect(await page.locator('#connection').textContent()).toContain('Connected');

    // A mapping to an attribute this organization's schema lacks fails; the log says what to do.
    const failed = await entra('PATCH', `/Users/${id}`, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [
        {
          op: 'Replace',
          path: 'urn:ietf:params:scim:schemas:extension:acme:2.0:User:division',
          value: 'R&D',
        },
      ],
    });
    expect(failed.status).toBe(400);
    const panel = page.locator('#connection');
    await expect.poll(() => panel.textContent(), { timeout: 20_000 }).toContain(`PATCH /Users/${id}`);
    expect(await panel.textContent()).toContain('What to do:');
    expect(await panel.textContent()).toContain('remove it from the IdP’s attribute mappings');
    await page.locator('#connection').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'setup-entra-connected.png'), fullPage: true });

    // On a phone's width the guide fits without sideways scrolling.
    const phone = await browser.newContext({
      viewport: PHONE,
      storageState: await page.context().storageState(),
    });
    const small = await phone.newPage();
    await small.goto(`${live.origin}/console/setup/okta`);
    expect(await small.getByRole('heading', { level: 1 }).textContent()).toBe('Connect Okta');
    const overflow = await small.evaluate('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    await small.screenshot({ path: join(SHOTS, 'setup-okta-phone.png'), fullPage: false });
    expect(problems).toEqual([]);
  });

  describe('the operator’s pages: accessible, whole on a phone, asking before revoking', () => {
    const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';

    /** A signed-in operator's page; `{ javaScriptEnabled: false }` for a browser without the script. */
    async function operator(viewport = LAPTOP, options: BrowserContextOptions = {}) {
      const opened = await newPage(viewport, options);
      await opened.page.goto(`${live.origin}/console/sign-in`);
      await opened.page.getByLabel('Admin token').fill(LIVE_ADMIN_TOKEN);
      await opened.page.getByRole('button', { name: 'Sign in' }).click();
      await opened.page.waitForURL(`${live.origin}/console`);
      return opened;
    }

    /**
     * An organization with everything its pages show: a token in use, a rotated one, people, a
     * failed request with its hint, a custom schema, a setup link and a webhook endpoint.
     */
    async function busyOrg(name: string) {
      const org = await admin('POST', '/orgs', { name, groupSync: true });
      const urn = 'urn:ietf:params:scim:schemas:extension:initech:2.0:User';
      await admin('PUT', `/orgs/${org.id}/schemas/${urn}`, {
        id: urn,
        name: 'Initech',
        attributes: [{ name: 'costCenter', type: 'string' }],
      });
      const okta = await admin('POST', `/orgs/${org.id}/tokens`, { name: 'Okta production' });
      const entra = await admin('POST', `/orgs/${org.id}/tokens`, { name: 'Entra pilot' });
      const scim = (token: string, method: string, path: string, body?: unknown) =>
        fetch(`${org.scimBaseUrl}${path}`, {
          method,
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/scim+json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
      const created = await scim(okta.token, 'POST', '/Users', {
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
        userName: 'ada@initech.example',
        name: { givenName: 'Ada', familyName: 'Lovelace' },
      });
      expect(created.status).toBe(201);
      const { id } = (await created.json()) as { id: string };
      expect(
        (await scim(okta.token, 'POST', '/Groups', { schemas: [GROUP], displayName: 'Engineering' })).status,
      ).toBe(201);
      const unknownAttribute = {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
        Operations: [
          {
            op: 'replace',
            path: 'urn:ietf:params:scim:schemas:extension:acme:2.0:User:division',
            value: 'R&D',
          },
        ],
      };
      expect((await scim(okta.token, 'PATCH', `/Users/${id}`, unknownAttribute)).status).toBe(400);
      expect((await scim(entra.token, 'GET', '/Users')).status).toBe(200);
      await admin('POST', `/orgs/${org.id}/tokens/${entra.id}/rotate`, {});
      await admin('POST', `/orgs/${org.id}/setup-links`, { note: 'for the IT team' });
      await admin('POST', '/webhooks', {
        url: 'https://hooks.example.com/scimd/provisioning-events',
        events: ['user.created'],
        orgId: org.id,
      });
      return { org, okta, entra };
    }

    it('asks before revoking a token in use or a setup link, in a dialog or on a page without the script, and names them in the audit log', async () => {
      const { org, okta, entra } = await busyOrg('Initech');
      const { page, problems } = await operator();
      await page.goto(`${live.origin}/console/orgs/${org.id}`);
      await checkPage(page);
      await page.screenshot({ path: join(SHOTS, 'console-org.png'), fullPage: true });

      // The token in use: the dialog names it and says when it was last used; Cancel leaves it be.
      const dialog = page.getByRole('dialog');
      await page.getByRole('button', { name: 'Revoke token Okta production' }).click();
      expect(await dialog.textContent()).toContain('Revoke the token “Okta production”?');
      expect(await dialog.textContent()).toMatch(/last used (just now|\d+ minutes? ago)/);
      await checkPage(page);
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await expect.poll(() => dialog.count()).toBe(0);
      expect(await page.getByRole('row', { name: /Okta production/ }).textContent()).toContain('Active');
      await page.getByRole('button', { name: 'Revoke token Okta production' }).click();
      await dialog.getByRole('button', { name: 'Revoke token' }).click();
      await page.waitForURL(/done=token-revoked/);
      expect(await page.getByRole('row', { name: /Okta production/ }).textContent()).toContain('Revoked');

      await page.getByRole('button', { name: /^Revoke setup link/ }).click();
      expect(await dialog.textContent()).toContain('for the IT team');
      expect(await dialog.textContent()).toContain('It has not been opened yet.');
      await dialog.getByRole('button', { name: 'Revoke setup link' }).click();
      await page.waitForURL(/done=link-revoked/);

      // Without the script, Revoke leads to a page asking the same; the rotated token's guard is on it.
      const plain = await operator(LAPTOP, { javaScriptEnabled: false });
      await plain.page.goto(`${live.origin}/console/orgs/${org.id}`);
      await plain.page.getByRole('button', { name: 'Revoke token Entra pilot' }).first().click();
      expect(await plain.page.getByRole('heading', { level: 1 }).textContent()).toBe(
        'Revoke the token “Entra pilot”?',
      );
      expect(await plain.page.locator('main').textContent()).toMatch(/last used (just now|\d+ minutes? ago)/);
      await plain.page
        .getByLabel('even though its replacement has not served a successful request yet')
        .check();
      await plain.page.getByRole('button', { name: 'Revoke token' }).click();
      await plain.page.waitForURL(/done=token-revoked/);
      const tokens = (await admin('GET', `/orgs/${org.id}/tokens`)).tokens as {
        id: string;
        revokedAt: string | null;
      }[];
      expect(tokens.find((t) => t.id === entra.id)?.revokedAt).not.toBeNull();
      expect(tokens.filter((t) => t.revokedAt === null)).toHaveLength(1);

      // The audit log says who did what by name: tokens and setup links, not their ids.
      await page.getByRole('link', { name: /^Activity/ }).click();
      await checkPage(page);
      const audit = (await page.locator('#audit + form + .table-wrap').textContent())!;
      expect(audit).toContain('token “Okta production”');
      expect(audit).toContain('setup link “for the IT team”');
      expect(audit).toContain('an operator, in the console');
      expect(audit).not.toContain(okta.id);
      expect(audit).not.toContain(entra.id);
      expect([...problems, ...plain.problems]).toEqual([]);
    }, 60_000);

    it('fits a phone’s width on every page: tables as cards, buttons on screen, no word broken', async () => {
      const { org } = await busyOrg('Umbrella Corporation');
      const signedOut = await newPage(PHONE);
      await signedOut.page.goto(`${live.origin}/console/sign-in`);
      await checkPage(signedOut.page);

      const { page, problems } = await operator(PHONE);
      await checkPage(page);
      const visit = async (path: string) => {
        await page.goto(`${live.origin}${path}`);
        await checkPage(page);
      };
      await visit(`/console/orgs/${org.id}`);
      await page.screenshot({ path: join(SHOTS, 'operator-phone.png'), fullPage: true });
      for (const button of await page.locator('main button:visible').all()) {
        const box = (await button.boundingBox())!;
        const name = (await button.getAttribute('aria-label')) ?? (await button.textContent()) ?? '';
        expect(box.x, name).toBeGreaterThanOrEqual(0);
        expect(box.x + box.width, name).toBeLessThanOrEqual(PHONE.width);
      }
      await page.getByRole('button', { name: 'Revoke token Okta production' }).click();
      await checkPage(page);
      await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();

      await visit(`/console/orgs/${org.id}/activity`);
      await visit('/console/webhooks');
      await visit(
        (await page
          .getByRole('link', { name: /provisioning-events/ })
          .first()
          .getAttribute('href'))!,
      );

      // An error page (its 404 is no problem of the page's).
      const missing = await page.context().newPage();
      await missing.goto(`${live.origin}/console/orgs/00000000-0000-4000-8000-000000000000`);
      await checkPage(missing);

      // The page asking, as a browser without the script is answered (axe-core needs the script).
      await page.goto(`${live.origin}/console/orgs/${org.id}`);
      await page.evaluate('document.querySelector("form[data-confirm]").submit()');
      await page.waitForURL(/\/revoke$/);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toMatch(/^Revoke the /);
      await checkPage(page);
      expect([...problems, ...signedOut.problems]).toEqual([]);
    }, 60_000);
  });
});

describe.skipIf(!haveChromium)('an IT admin on white-labelled setup pages, in headless Chromium', () => {
  const BRAND = 'Acme Cloud';
  const LOGO = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 176 40"><rect y="4" width="32" height="32" rx="8" fill="#6d28d9"/><path d="M9 28 16 11l7 17M12 22h8" stroke="#fff" stroke-width="3.5" fill="none" stroke-linecap="round" stroke-linejoin="round"/><text x="42" y="27" font-family="system-ui, sans-serif" font-size="20" font-weight="700" fill="#1b1f24">Acme Cloud</text></svg>`;
  let browser: Browser;
  let database: Database;
  let server: Server;
  let origin = '';
  const logoDir = mkdtempSync(join(tmpdir(), 'scimd-brand-'));
  beforeAll(async () => {
    const logoPath = join(logoDir, 'acme.svg');
    writeFileSync(logoPath, LOGO);
    const brand = loadBrand({ name: BRAND, color: '#6d28d9', logoPath });
    database = await createTestDatabase();
    server = createServer();
    server.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const app = createApp({
      database,
      publicUrl: origin,
      adminToken: LIVE_ADMIN_TOKEN,
      logger: pino({ level: 'silent' }),
      brand,
    });
    server.on('request', app.callback());
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    await database?.close();
    rmSync(logoDir, { recursive: true, force: true });
  });

  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${origin}/admin/v1${path}`, {
      method,
      headers: { Authorization: `Bearer ${LIVE_ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    expect(res.status, `${method} ${path}`).toBeLessThan(300);
    // biome-ignore lint/suspicious/noExplicitAny: the admin API's JSON, read by the test.
    return (await res.json()) as any;
  };

  /** An IdP's requests with the token the page revealed. */
  const idp =
    (baseUrl: string, token: string, userAgent: string) => (method: string, path: string, body?: unknown) =>
      fetch(`${baseUrl}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${token}`,
          'Content-Type': 'application/scim+json',
          'User-Agent': userAgent,
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });

  /** Opens a setup link in a new browser; the page fails the test on a script error or a refused resource. */
  async function openLink(url: string): Promise<{ page: Page; problems: string[] }> {
    const context = await browser.newContext({ viewport: LAPTOP });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    await page.goto(url);
    expect(await page.title()).toBe(`Connect your identity provider · ${BRAND}`);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(`${origin}/console/setup`);
    return { page, problems };
  }

  /** The brand, and no scimd, in what the page shows and in its markup; and checkPage's checks. */
  async function expectWhiteLabel(page: Page): Promise<void> {
    await checkPage(page);
    expect(await page.title()).toMatch(new RegExp(` · ${BRAND}$`));
    expect(await page.locator('header.top img.brand-logo').getAttribute('alt')).toBe(BRAND);
    const markup = (await page.content()).replace(/scimd_[\w-]{43}/g, '');
    expect(markup).not.toMatch(/scimd/i);
    expect(await page.locator('a[href="/console"], a[href^="/console/sign-in"]').count()).toBe(0);
    // The brand's colour reaches the page (brand.css), as the step numbers and the header's band.
    const band = await page.evaluate('getComputedStyle(document.querySelector("header.top")).borderTopColor');
    expect(band).toBe('rgb(109, 40, 217)');
  }

  /** The connection panel is on the screen, whatever part of the steps is. */
  async function expectPanelInView(page: Page): Promise<void> {
    const box = (await page.locator('aside.connection').boundingBox())!;
    const height = page.viewportSize()!.height;
    expect(box.y).toBeGreaterThanOrEqual(0);
    expect(box.y).toBeLessThan(height / 2);
  }

  /** At a phone's width, none of these pages scrolls sideways, and words are not broken anywhere. */
  async function expectPhoneFit(page: Page, paths: readonly string[]): Promise<void> {
    const phone = await browser.newContext({
      viewport: PHONE,
      storageState: await page.context().storageState(),
    });
    const small = await phone.newPage();
    for (const path of paths) {
      await small.goto(`${origin}${path}`);
      // document.scrollingElement.scrollWidth <= clientWidth, and no word on two lines (axe.ts).
      await checkPage(small);
    }
    await phone.close();
  }

  it('Okta: numbered steps beside a panel that stays in view, turns green at the connector test and lists arrivals newest first', async () => {
    const org = await admin('POST', '/orgs', { name: 'Initech', groupSync: true });
    const { url } = await admin('POST', `/orgs/${org.id}/setup-links`, { expiresInHours: 24 });
    const { page, problems } = await openLink(url);
    await expectWhiteLabel(page);
    await page.getByRole('link', { name: 'Okta' }).click();
    await page.waitForURL(`${origin}/console/setup/okta`);
    await expectWhiteLabel(page);

    const steps = page.locator('ol.steps > li');
    expect(await steps.count()).toBeGreaterThanOrEqual(6);
    expect(await steps.nth(2).locator('h3').textContent()).toBe('Enter the SCIM connection');
    // Beside the steps on a laptop's width.
    const panel = (await page.locator('aside.connection').boundingBox())!;
    const first = (await steps.first().boundingBox())!;
    expect(panel.x).toBeGreaterThan(first.x + first.width - 1);

    await page.getByRole('button', { name: 'Generate a token' }).click();
    const token = (await page.locator('#revealed-secret').textContent())!.trim();
    const okta = idp(org.scimBaseUrl, token, 'Okta SCIM Client 1.0.0');

    // The admin is at the token's step, clicking Test Connector Configuration: the panel is in view.
    await steps.nth(4).scrollIntoViewIfNeeded();
    expect((await okta('GET', '/Users?startIndex=1&count=1')).status).toBe(200);
    const state = page.locator('#connection [data-state]');
    await expect.poll(() => state.getAttribute('data-state'), { timeout: 20_000 }).toBe('connected');
    await expectPanelInView(page);

    for (const [userName, givenName, familyName] of [
      ['ada@initech.example', 'Ada', 'Lovelace'],
      ['grace@initech.example', 'Grace', 'Hopper'],
    ]) {
      expect(
        (await okta('GET', `/Users?filter=userName+eq+%22${encodeURIComponent(userName!)}%22`)).status,
      ).toBe(200);
      const created = await okta('POST', '/Users', {
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
        userName,
        name: { givenName, familyName },
        displayName: `${givenName} ${familyName}`,
        emails: [{ primary: true, value: userName, type: 'work' }],
        active: true,
      });
      expect(created.status).toBe(201);
    }
    expect(
      (
        await okta('POST', '/Groups', {
          schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
          displayName: 'Engineering',
          members: [],
        })
      ).status,
    ).toBe(201);
    const connection = page.locator('#connection');
    await expect
      .poll(() => connection.textContent(), { timeout: 20_000 })
      .toContain('2 users and 1 group received so far.');
    const names = await connection.locator('ul.arrivals .who').allTextContents();
    expect(names).toEqual(['Grace Hopper', 'Ada Lovelace', 'Engineering']);
    await expectPanelInView(page);
    await expectWhiteLabel(page);
    await page.evaluate('window.scrollTo(0, 0)');
    await page.screenshot({ path: join(SHOTS, 'setup-okta.png') });

    await expectPhoneFit(page, [
      new URL(url).pathname,
      '/console/setup',
      '/console/setup/okta',
      '/console/setup/entra',
      '/console/setup/onelogin',
    ]);
    const phone = await browser.newContext({
      viewport: PHONE,
      storageState: await page.context().storageState(),
    });
    const small = await phone.newPage();
    await small.goto(`${origin}/console/setup/okta`);
    await small.screenshot({ path: join(SHOTS, 'setup-phone.png') });
    await small.locator('ol.steps > li').nth(4).scrollIntoViewIfNeeded();
    // Above the steps and sticky on a phone: still on the screen at step 5.
    await expectPanelInView(small);
    await phone.close();
    expect(problems).toEqual([]);
  });

  it('Entra: the panel turns green while step 3 (Test Connection) is on the screen, and shows the first user', async () => {
    const org = await admin('POST', '/orgs', { name: 'Globex', groupSync: false });
    const { url } = await admin('POST', `/orgs/${org.id}/setup-links`, { expiresInHours: 24 });
    const { page, problems } = await openLink(url);
    await page.getByRole('link', { name: 'Microsoft Entra ID' }).click();
    await page.waitForURL(`${origin}/console/setup/entra`);
    await expectWhiteLabel(page);
    expect(await page.locator('main').textContent()).toContain(`${org.scimBaseUrl}?aadOptscim062020`);
    await page.getByRole('button', { name: 'Generate a token' }).click();
    const token = (await page.locator('#revealed-secret').textContent())!.trim();
    const entra = idp(`${org.scimBaseUrl}`, token, 'Microsoft.AAD.Provisioning');

    const testStep = page.locator('ol.steps > li').nth(2);
    expect(await testStep.locator('h3').textContent()).toBe('Test the connection');
    await testStep.scrollIntoViewIfNeeded();
    expect((await entra('GET', '/Users?filter=userName+eq+%2248c3a7b2-5f1e%22')).status).toBe(200);
    const state = page.locator('#connection [data-state]');
    await expect.poll(() => state.getAttribute('data-state'), { timeout: 20_000 }).toBe('connected');
    await expectPanelInView(page);
    expect(await testStep.isVisible()).toBe(true);

    const created = await entra('POST', '/Users', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      externalId: 'linus',
      userName: 'linus@globex.example',
      active: true,
      displayName: 'Linus Torvalds',
      name: { givenName: 'Linus', familyName: 'Torvalds' },
    });
    expect(created.status).toBe(201);
    const connection = page.locator('#connection');
    await expect
      .poll(() => connection.textContent(), { timeout: 20_000 })
      .toContain('1 user received so far.');
    expect(await connection.locator('ul.arrivals .who').allTextContents()).toEqual(['Linus Torvalds']);
    // Group sync is off: no list of groups.
    expect(await connection.getByRole('heading', { name: 'Groups' }).count()).toBe(0);
    await expectWhiteLabel(page);
    await expectPhoneFit(page, ['/console/setup', '/console/setup/entra']);
    expect(problems).toEqual([]);
  });

  describe('roles: an operator and an IT admin map groups to roles', () => {
    /** An organization with roles of its own, a token, and a group that arrived with one member. */
    async function orgWithRoles(name: string) {
      const org = await admin('POST', '/orgs', { name, groupSync: true });
      await admin('PUT', `/orgs/${org.id}/roles`, {
        roles: [
          {
            value: 'admin',
            displayName: 'Administrator',
            description: 'Manages billing and members',
            priority: 30,
          },
          { value: 'editor', displayName: 'Editor', description: 'Creates and edits projects', priority: 20 },
          { value: 'viewer', displayName: 'Viewer', description: 'Reads projects', priority: 10 },
        ],
      });
      const { token } = await admin('POST', `/orgs/${org.id}/tokens`, { name: 'Okta' });
      const scim = idp(org.scimBaseUrl, token, 'Okta SCIM Client 1.0.0');
      const user = (await (
        await scim('POST', '/Users', {
          schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
          userName: `ada@${name.toLowerCase()}.example`,
          displayName: 'Ada Lovelace',
        })
      ).json()) as { id: string };
      const group = (await (
        await scim('POST', '/Groups', {
          schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
          displayName: 'Engineering',
          members: [{ value: user.id }],
        })
      ).json()) as { id: string };
      return { org, scim, user, group };
    }

    it('an operator maps a group to a role and sees a member’s effective role', async () => {
      const { org, user } = await orgWithRoles('Umbrella');
      const context = await browser.newContext({ viewport: LAPTOP });
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      await page.goto(`${origin}/console/sign-in`);
      await page.getByLabel('Admin token').fill(LIVE_ADMIN_TOKEN);
      await page.keyboard.press('Enter');
      await page.waitForURL(`${origin}/console`);
      await page.goto(`${origin}/console/orgs/${org.id}`);
      await page.getByRole('link', { name: /^Roles:/ }).click();
      await page.waitForURL(`${origin}/console/orgs/${org.id}/roles`);
      await checkPage(page);
      expect(await page.getByRole('row', { name: /Administrator/ }).textContent()).toContain(
        'this organization',
      );

      await page.getByLabel('Role for Engineering').selectOption({ label: 'Administrator (admin)' });
      await page.getByLabel('Default role', { exact: true }).selectOption({ label: 'Viewer (viewer)' });
      await page.getByRole('button', { name: 'Save mappings' }).click();
      await page.waitForURL(/done=mappings/);
      expect(await page.getByRole('status').textContent()).toContain('Mappings saved');
      expect(await page.getByLabel('Role for Engineering').inputValue()).toBe('admin');
      await checkPage(page);

      await page.getByLabel('User id or userName').fill('ada@umbrella.example');
      await page.getByRole('button', { name: 'Look up' }).click();
      await page.waitForURL(/user=/);
      const roles = page.locator('#user-roles ~ .table-wrap').first();
      expect(await roles.textContent()).toContain('admin');
      expect(await roles.textContent()).toContain('group “Engineering”');
      expect(await roles.textContent()).not.toContain('viewer');
      expect(await page.locator('main').textContent()).toContain(user.id);
      await checkPage(page);
      await page.screenshot({ path: join(SHOTS, 'console-roles.png'), fullPage: true });

      const phone = await browser.newContext({ viewport: PHONE, storageState: await context.storageState() });
      const small = await phone.newPage();
      await small.goto(page.url());
      await checkPage(small);
      await phone.close();
      await context.close();
      expect(problems).toEqual([]);
    }, 60_000);

    it('an IT admin maps an arrived group, and a group by name before it arrives, and picks the default role', async () => {
      const { org, scim } = await orgWithRoles('Soylent');
      const { url } = await admin('POST', `/orgs/${org.id}/setup-links`, { expiresInHours: 24 });
      const { page, problems } = await openLink(url);
      await page.getByRole('link', { name: 'Map your groups to roles' }).click();
      await page.waitForURL(`${origin}/console/setup/roles`);
      await expectWhiteLabel(page);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Map your groups to roles');
      expect(await page.getByRole('row', { name: /Editor/ }).textContent()).toContain(
        'Creates and edits projects',
      );

      await page.getByLabel('Find a group').fill('eng');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.waitForURL(/q=eng/);
      await page.getByLabel('Role for Engineering').selectOption({ label: 'Administrator' });
      await page.getByLabel('Group name 1', { exact: true }).fill('Sales');
      await page.getByLabel('Role for group name 1', { exact: true }).selectOption({ label: 'Editor' });
      await page.getByLabel('Default role', { exact: true }).selectOption({ label: 'Viewer' });
      await page.getByRole('button', { name: 'Save mappings' }).click();
      await page.waitForURL(/done=mappings/);
      expect(await page.getByRole('status').textContent()).toContain('Saved');
      await expectWhiteLabel(page);
      expect(await admin('GET', `/orgs/${org.id}/role-mappings`)).toMatchObject({
        mappings: [{ role: 'admin' }, { group: { displayName: 'Sales' }, role: 'editor' }],
        defaultRole: 'viewer',
        mode: 'multiple',
      });

      // Sales arrives with a member: the mapping by name gives them Editor.
      const grace = (await (
        await scim('POST', '/Users', {
          schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
          userName: 'grace@soylent.example',
        })
      ).json()) as { id: string };
      const sales = (await (
        await scim('POST', '/Groups', {
          schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
          displayName: 'Sales',
          members: [{ value: grace.id }],
        })
      ).json()) as { id: string };
      expect((await admin('GET', `/orgs/${org.id}/users/${grace.id}/roles`)).roles).toEqual([
        { value: 'editor', sources: [`group:${sales.id}`] },
      ]);

      await page.goto(`${origin}/console/setup/roles`);
      await expectWhiteLabel(page);
      await page.screenshot({ path: join(SHOTS, 'setup-roles.png'), fullPage: true });
      await expectPhoneFit(page, [
        '/console/setup',
        '/console/setup/roles',
        '/console/setup/okta',
        '/console/setup/entra',
      ]);
      expect(problems).toEqual([]);
    }, 60_000);
  });

  it('the operator’s pages keep scimd’s name, with the brand’s logo and colour beside it', async () => {
    const context = await browser.newContext({ viewport: LAPTOP });
    const page = await context.newPage();
    await page.goto(`${origin}/console/sign-in`);
    await page.getByLabel('Admin token').fill(LIVE_ADMIN_TOKEN);
    await page.keyboard.press('Enter');
    await page.waitForURL(`${origin}/console`);
    expect(await page.title()).toBe('Organizations · scimd');
    const logo = (await page.evaluate(
      '(() => { const s = getComputedStyle(document.querySelector("header.top .logo")); return [s.backgroundImage, s.width]; })()',
    )) as [string, string];
    expect(logo[0]).toContain('/console/assets/logo.svg');
    // The logo's own proportions (176 by 40) at the header's height of 1.75rem.
    expect(Number.parseFloat(logo[1])).toBeCloseTo((176 / 40) * 1.75 * 16, 0);
    const band = await page.evaluate('getComputedStyle(document.querySelector("header.top")).borderTopColor');
    expect(band).toBe('rgb(109, 40, 217)');
    await context.close();
  });
});
