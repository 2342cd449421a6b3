// A scimd listening on a loopback port over a fresh test database, with one organization (group sync
// on) and a token: what an IdP's conformance suite talks to. Requests go through fetch, so headers,
// query strings and bodies arrive exactly as written.
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { pino } from 'pino';
import { afterAll, beforeAll } from 'vitest';
import { createApp } from '../../src/app.js';
import type { Database } from '../../src/db/database.js';
import { createTestDatabase } from '../helpers/database.js';
import { createTestScimd } from '../helpers/mounted-scimd.js';

export const LIVE_ADMIN_TOKEN = 'conformance-admin-token-0123456789abcdefghij';

export interface LiveResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body, or undefined when there is none or it is not JSON. */
  // biome-ignore lint/suspicious/noExplicitAny: conformance checks read whatever JSON came back.
  body: any;
}

export interface LiveServer {
  /** e.g. http://127.0.0.1:41234 */
  origin: string;
  /** Where scimd answers: the origin, or the origin and the mount path (`…/identity`). */
  root: string;
  /** The organization's SCIM base URL (absolute). */
  baseUrl: string;
  orgId: string;
  token: string;
  /** The test database (when scimd runs as its own app, not mounted). */
  database: Database;
  /**
   * A request under the SCIM base URL. `path` may carry a raw query string (sent as written).
   * Headers are exactly those given plus Authorization (unless `auth: false` or overridden);
   * a body object is sent as JSON with the given Content-Type (default application/scim+json).
   */
  scim(
    method: string,
    path: string,
    options?: {
      headers?: Record<string, string>;
      body?: unknown;
      auth?: boolean | string;
      /** Another organization (from newTenant) to send to instead of the default one. */
      tenant?: Tenant;
    },
  ): Promise<LiveResponse>;
  /** Creates another organization (group sync on) and returns its base URL and a token. */
  newTenant(): Promise<Tenant>;
}

interface Tenant {
  orgId: string;
  baseUrl: string;
  token: string;
}

async function send(url: string, init: RequestInit): Promise<LiveResponse> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, text, body };
}

/** How the live scimd is served: its own app, or createScimd mounted at /identity inside another app. */
export type LiveMount = 'app' | 'koa' | 'node:http';

interface Started {
  server: Server;
  /** Where scimd answers: the origin, and the mount path when mounted. */
  root: string;
  close: () => Promise<void>;
}

/** A server on a loopback port; what answers is given with `use` once the origin is known. */
async function listen(): Promise<{ server: Server; origin: string; use: (l: RequestListener) => void }> {
  let current: RequestListener = (_req, res) => res.writeHead(503).end();
  const server = createServer((req, res) => current(req, res));
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { server, origin, use: (l) => (current = l) };
}

async function startApp(): Promise<Started & { database: Database }> {
  const database = await createTestDatabase();
  // meta.location must use the address the client reached: listen first to learn the port.
  const { server, origin, use } = await listen();
  const app = createApp({
    database,
    publicUrl: origin,
    adminToken: LIVE_ADMIN_TOKEN,
    logger: pino({ level: 'silent' }),
  });
  use(app.callback());
  return { server, root: origin, database, close: () => database.close() };
}

/** createScimd at /identity inside a Koa app or a bare node:http server, each with a route of its own. */
async function startMounted(mount: 'koa' | 'node:http'): Promise<Started> {
  const { server, origin, use } = await listen();
  const { scimd, close } = await createTestScimd(`${origin}/identity`, LIVE_ADMIN_TOKEN);
  if (mount === 'koa') {
    const host = new Koa();
    host.use(scimd.koa);
    host.use((ctx) => {
      ctx.body = { app: 'host' };
    });
    use(host.callback());
  } else {
    use((req, res) => {
      if (req.url?.startsWith('/identity/')) return scimd.handler(req, res);
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ app: 'host' }));
    });
  }
  return { server, root: `${origin}/identity`, close };
}

/** Starts the server before the file's tests and stops it after; the returned object fills in then. */
export function useLiveServer(mount: LiveMount = 'app'): LiveServer {
  const live = {} as LiveServer;
  let started: (Started & { database?: Database }) | undefined;
  beforeAll(async () => {
    started = mount === 'app' ? await startApp() : await startMounted(mount);
    const origin = new URL(started.root).origin;
    const root = started.root;
    if (started.database) live.database = started.database;

    const admin = async (method: string, path: string, body?: unknown) => {
      const res = await send(`${root}/admin/v1${path}`, {
        method,
        headers: { Authorization: `Bearer ${LIVE_ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (res.status >= 300) throw new Error(`admin ${method} ${path}: ${res.status} ${res.text}`);
      return res.body;
    };
    const newTenant = async (): Promise<Tenant> => {
      const org = await admin('POST', '/orgs', { name: 'Conformance', groupSync: true });
      const token = await admin('POST', `/orgs/${org.id}/tokens`, { name: 'idp' });
      return { orgId: org.id as string, baseUrl: org.scimBaseUrl as string, token: token.token as string };
    };
    const tenant = await newTenant();
    Object.assign(live, {
      origin,
      root,
      ...tenant,
      newTenant,
      scim: (method, path, options = {}) => {
        const headers: Record<string, string> = {};
        const to = options.tenant ?? tenant;
        const auth = options.auth ?? true;
        if (auth !== false) headers.Authorization = typeof auth === 'string' ? auth : `Bearer ${to.token}`;
        let body: string | undefined;
        if (options.body !== undefined) {
          body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
          headers['Content-Type'] = 'application/scim+json';
        }
        Object.assign(headers, options.headers ?? {});
        return send(`${to.baseUrl}${path}`, { method, headers, body });
      },
    } satisfies Partial<LiveServer>);
  });
  afterAll(async () => {
    if (!started) return;
    const { server } = started;
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await started.close();
  });
  return live;
}
