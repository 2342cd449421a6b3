// createScimd mounted at /identity inside a Koa app: scimd answers only under its path, the app keeps
// the rest, and what scimd sends a browser (redirects, cookie paths, the console's links) names the path.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathWithinBase } from '../../src/http/base-path.js';
import type { Scimd } from '../../src/server.js';
import { createTestScimd } from '../helpers/mounted-scimd.js';

const ADMIN_TOKEN = 'mounted-admin-token-0123456789abcdefghijklmn';

describe('pathWithinBase', () => {
  it('takes the base path off the paths below it, and nothing else', () => {
    expect(pathWithinBase('/identity/scim/v2/x/Users?count=1', '/identity')).toBe('/scim/v2/x/Users?count=1');
    expect(pathWithinBase('/identity', '/identity')).toBe('/');
    expect(pathWithinBase('/identity?x=1', '/identity')).toBe('/?x=1');
    expect(pathWithinBase('/identityx/scim', '/identity')).toBeUndefined();
    expect(pathWithinBase('/other', '/identity')).toBeUndefined();
  });

  it("at the root, takes only scimd's own paths", () => {
    expect(pathWithinBase('/scim/v2/x/Users', '')).toBe('/scim/v2/x/Users');
    expect(pathWithinBase('/console', '')).toBe('/console');
    expect(pathWithinBase('/healthz', '')).toBe('/healthz');
    expect(pathWithinBase('/scimx', '')).toBeUndefined();
    expect(pathWithinBase('/', '')).toBeUndefined();
  });
});

describe('createScimd mounted at /identity in Koa', () => {
  let server: Server;
  let scimd: Scimd;
  let origin: string;
  let close: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    const host = new Koa();
    // The app's middleware is composed once scimd is in it.
    let answer: ReturnType<Koa['callback']> | undefined;
    server = createServer((req, res) => answer?.(req, res)).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    ({ scimd, close } = await createTestScimd(`${origin}/identity`, ADMIN_TOKEN));
    host.use(scimd.koa);
    host.use((ctx) => {
      ctx.body = { app: 'host', path: ctx.path };
    });
    answer = host.callback();
  });

  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    await close?.();
  });

  it("answers under its path and leaves the app's own paths to the app", async () => {
    expect(scimd.basePath).toBe('/identity');
    expect(await (await fetch(`${origin}/identity/healthz`)).json()).toEqual({ status: 'ok' });
    expect(await (await fetch(`${origin}/healthz`)).json()).toEqual({ app: 'host', path: '/healthz' });
    expect(await (await fetch(`${origin}/scim/v2`)).json()).toEqual({ app: 'host', path: '/scim/v2' });
    const org = await fetch(`${origin}/identity/admin/v1/orgs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Mounted' }),
    });
    expect(org.status).toBe(201);
    const { id, scimBaseUrl } = (await org.json()) as { id: string; scimBaseUrl: string };
    expect(scimBaseUrl).toBe(`${origin}/identity/scim/v2/${id}`);
  });

  it("names its path in redirects, cookies and the console's links", async () => {
    const entry = await fetch(`${origin}/identity/console`, { redirect: 'manual' });
    expect(entry.headers.get('location')).toBe('/identity/console/sign-in');
    const signIn = await fetch(`${origin}/identity/console/sign-in`);
    const page = await signIn.text();
    expect(page).toContain('href="/identity/console/assets/console.css"');
    expect(page).toContain('action="/identity/console/sign-in"');
    expect(page).not.toMatch(/(href|action|src)="\/console/);
    const asset = await fetch(`${origin}/identity/console/assets/console.css`);
    expect(asset.status).toBe(200);

    const signedIn = await fetch(`${origin}/identity/console/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
      body: new URLSearchParams({ adminToken: ADMIN_TOKEN }).toString(),
    });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('location')).toBe('/identity/console');
    expect(signedIn.headers.get('set-cookie')).toContain('Path=/identity/console');
  });
});
