// The console's two journeys in headless Chromium (Debian's `chromium`, driven by playwright-core):
// an operator creates an organization, a token and a setup link; an IT admin opens a link, chooses
// Entra, reveals a token, and watches Entra's first requests turn the indicator green and a failed
// request appear with its hint. Screenshots go to CONSOLE_SCREENSHOTS (the README's come from there).
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIVE_ADMIN_TOKEN, useLiveServer } from '../conformance/live-server.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium && process.env.CONSOLE_BROWSER_REQUIRED === '1')
  throw new Error(`CONSOLE_BROWSER_REQUIRED is set, but there is no Chromium at ${CHROMIUM}`);

const SHOTS = process.env.CONSOLE_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), 'scimd-console-'));
mkdirSync(SHOTS, { recursive: true });
const LAPTOP = { width: 1280, height: 860 };
const PHONE = { width: 390, height: 844 };

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
  async function newPage(viewport = LAPTOP): Promise<{ page: Page; problems: string[] }> {
    const context = await browser.newContext({ viewport });
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
    await page.getByLabel('Admin token').fill(LIVE_ADMIN_TOKEN);
    await page.keyboard.press('Enter');
    await page.waitForURL(`${live.origin}/console`);

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
    await page.screenshot({ path: join(SHOTS, 'operator-organization.png'), fullPage: true });

    // The list of organizations shows its health at a glance.
    await page.getByRole('link', { name: 'Organizations' }).click();
    expect(await page.getByRole('row', { name: /Acme Corporation/ }).textContent()).toContain('Healthy');
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
});
