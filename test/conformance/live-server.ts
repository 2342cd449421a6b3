// A scimd listening on a loopback port over a fresh test database, with one organization (group sync
// on) and a token: what an IdP's conformance suite talks to. Requests go through fetch, so headers,
// query strings and bodies arrive exactly as written.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll } from 'vitest';
import { createApp } from '../../src/app.js';
import type { Database } from '../../src/db/database.js';
import { createTestDatabase } from '../helpers/database.js';

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
  /** The organization's SCIM base URL (absolute). */
  baseUrl: string;
  orgId: string;
  token: string;
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

/** Starts the server before the file's tests and stops it after; the returned object fills in then. */
export function useLiveServer(): LiveServer {
  const live = {} as LiveServer;
  let server: Server | undefined;
  beforeAll(async () => {
    const database = await createTestDatabase();
    const app = createApp({
      database,
      publicUrl: 'http://placeholder',
      adminToken: LIVE_ADMIN_TOKEN,
      logger: pino({ level: 'silent' }),
    });
    // meta.location must use the address the client reached: start once to learn the port.
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server!.once('listening', r));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await new Promise((r) => server!.close(r));
    const real = createApp({
      database,
      publicUrl: origin,
      adminToken: LIVE_ADMIN_TOKEN,
      logger: pino({ level: 'silent' }),
    });
    server = real.listen(Number(new URL(origin).port), '127.0.0.1');
    await new Promise((r) => server!.once('listening', r));

    const admin = async (method: string, path: string, body?: unknown) => {
      const res = await send(`${origin}/admin/v1${path}`, {
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
      ...tenant,
      database,
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
    if (server) await new Promise((r) => server!.close(r));
    await live.database?.close();
  });
  return live;
}
