// What Microsoft Entra ID's provisioning service puts on the wire:
// a client for one organization's SCIM base URL that sends exactly the headers it is given, and the
// two PATCH dialects Entra speaks, chosen by the `aadOptscim062020` flag in the Tenant URL.
import { type IncomingHttpHeaders, type OutgoingHttpHeaders, request } from 'node:http';
import { expect } from 'vitest';
import { ENTERPRISE, GROUP, LIST, PATCH_OP, SCIM_ERROR, USER } from '../../helpers/scim.js';

export { ENTERPRISE, GROUP, LIST, USER };

export const MS_GROUP = 'http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group';
export const MANAGER = `${ENTERPRISE}:manager`;
export const SCIM_JSON = 'application/scim+json';

export type Mode = 'default' | 'flag';
export const MODES: readonly Mode[] = ['default', 'flag'];
const FLAG = 'aadOptscim062020';

// biome-ignore lint/suspicious/noExplicitAny: conformance checks read whatever JSON came back.
export type Json = any;

export interface Reply {
  method: string;
  /** The request target exactly as sent (path and query). */
  target: string;
  /** The headers the request carried (Host aside). */
  sent: OutgoingHttpHeaders;
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The parsed JSON body, or undefined when there is none or it is not JSON. */
  body: Json;
}

interface SendOptions {
  body?: unknown;
  /** Replaces the default headers (Authorization, and Content-Type with a body) when given. */
  headers?: Record<string, string>;
}

export interface EntraClient {
  readonly mode: Mode;
  /** The tenant's SCIM base URL without the flag. */
  readonly baseUrl: string;
  /** Every reply since the last `drain()`. */
  drain(): Reply[];
  send(method: string, path: string, options?: SendOptions): Promise<Reply>;
  get(path: string): Promise<Reply>;
  post(path: string, body: unknown): Promise<Reply>;
  patch(path: string, operations: Operation[]): Promise<Reply>;
  delete(path: string): Promise<Reply>;
}

/**
 * A client of the SCIM base URL `baseUrl`. In flag mode the Tenant URL ends in `?aadOptscim062020`,
 * so every request carries the flag in its query string. Requests go through node:http, which adds
 * nothing but Host and Connection: no User-Agent, no Accept unless given.
 */
export function entraClient(mode: Mode, baseUrl: string, token: string): EntraClient {
  const base = new URL(baseUrl);
  const withFlag = (path: string) =>
    mode === 'flag' ? `${path}${path.includes('?') ? '&' : '?'}${FLAG}` : path;
  let replies: Reply[] = [];

  const send = (method: string, path: string, options: SendOptions = {}): Promise<Reply> => {
    const text = options.body === undefined ? undefined : JSON.stringify(options.body);
    const headers: Record<string, string> = options.headers ?? {
      Authorization: `Bearer ${token}`,
      // Entra's bodies say utf-8.
      ...(text === undefined ? {} : { 'Content-Type': `${SCIM_JSON}; charset=utf-8` }),
    };
    if (text !== undefined) headers['Content-Length'] = String(Buffer.byteLength(text));
    const target = `${base.pathname}${withFlag(path)}`;
    return new Promise<Reply>((resolve, reject) => {
      const req = request(
        { host: base.hostname, port: base.port, path: target, method, headers, agent: false },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const body = Buffer.concat(chunks).toString('utf8');
            let json: unknown;
            try {
              json = body ? JSON.parse(body) : undefined;
            } catch {
              json = undefined;
            }
            const reply: Reply = {
              method,
              target,
              sent: req.getHeaders(),
              status: res.statusCode ?? 0,
              headers: res.headers,
              text: body,
              body: json,
            };
            replies.push(reply);
            resolve(reply);
          });
        },
      );
      req.on('error', reject);
      req.end(text);
    });
  };

  return {
    mode,
    baseUrl,
    drain() {
      const all = replies;
      replies = [];
      return all;
    },
    send,
    get: (path) => send('GET', path),
    post: (path, body) => send('POST', path, { body }),
    patch: (path, operations) =>
      send('PATCH', path, { body: { schemas: [PATCH_OP], Operations: operations } }),
    delete: (path) => send('DELETE', path),
  };
}

/**
 * A query string the way Entra writes one: form-encoded, so a space is `+`, `@` is `%40` and `"` is
 * `%22` (the validator leaves the quotes raw: `rawQuotes`).
 */
export function formEncode(value: string, { rawQuotes = false } = {}): string {
  const encoded = encodeURIComponent(value).replace(/%20/g, '+');
  return rawQuotes ? encoded.replace(/%22/g, '"') : encoded;
}

interface Operation {
  op: string;
  path?: string;
  value?: unknown;
}

type OpName = 'add' | 'replace' | 'remove';

/** The PATCH shapes of one Entra mode. */
export interface Dialect {
  op(name: OpName): string;
  /** A boolean as Entra writes it: "True"/"False" by default, true/false with the flag. */
  bool(value: boolean): boolean | string;
  /**
   * Several attributes at once. Default: one op per attribute, each with its path. Flag: filtered
   * paths keep their own op and everything else is merged into one pathless op, keyed by dotted
   * (`name.givenName`) and URN-qualified names.
   */
  update(name: 'add' | 'replace', attributes: Record<string, unknown>): Operation[];
  addMembers(ids: readonly string[]): Operation[];
  removeMembers(ids: readonly string[]): Operation[];
}

export function dialect(mode: Mode): Dialect {
  const op = (name: OpName) => (mode === 'flag' ? name : `${name[0]!.toUpperCase()}${name.slice(1)}`);
  return {
    op,
    bool: (value) => (mode === 'flag' ? value : value ? 'True' : 'False'),
    update(name, attributes) {
      const entries = Object.entries(attributes);
      if (mode === 'default') return entries.map(([path, value]) => ({ op: op(name), path, value }));
      const filtered = entries.filter(([path]) => path.includes('['));
      const merged = entries.filter(([path]) => !path.includes('['));
      return [
        ...filtered.map(([path, value]) => ({ op: op(name), path, value })),
        ...(merged.length > 0 ? [{ op: op(name), value: Object.fromEntries(merged) }] : []),
      ];
    },
    addMembers: (ids) => [
      { op: op('add'), path: 'members', value: ids.map((value) => ({ $ref: null, value })) },
    ],
    removeMembers: (ids) =>
      mode === 'flag'
        ? ids.map((id) => ({ op: op('remove'), path: `members[value eq "${id}"]` }))
        : [{ op: op('remove'), path: 'members', value: ids.map((value) => ({ value })) }],
  };
}

/**
 * Every response Entra reads must be `application/scim+json` exactly. A 204 carries no body; if it names a type at all, it must be the same one.
 */
function expectScimContentTypes(replies: readonly Reply[]): void {
  for (const reply of replies) {
    const where = `${reply.method} ${reply.target} → ${reply.status}`;
    if (reply.status === 204) {
      expect(reply.text, where).toBe('');
      if (reply.headers['content-type'] !== undefined)
        expect(reply.headers['content-type'], where).toBe(SCIM_JSON);
    } else {
      expect(reply.headers['content-type'], where).toBe(SCIM_JSON);
    }
  }
}

/**
 * What every exchange of a test must show: the flag on every request exactly in flag mode, and the
 * content type of every reply.
 */
export function expectEntraReplies(client: EntraClient): void {
  const replies = client.drain();
  for (const reply of replies)
    expect(new URLSearchParams(reply.target.split('?')[1] ?? '').has(FLAG), reply.target).toBe(
      client.mode === 'flag',
    );
  expectScimContentTypes(replies);
}

/** A SCIM error (RFC 7644 §3.12): Error schema, status as a string, a non-empty detail. */
export function expectScimError(reply: Reply, status: number, scimType?: string): void {
  expect(reply.status, reply.text).toBe(status);
  expect(reply.body.schemas).toEqual([SCIM_ERROR]);
  expect(reply.body.status).toBe(String(status));
  expect(typeof reply.body.detail).toBe('string');
  expect(reply.body.detail.length).toBeGreaterThan(0);
  if (scimType !== undefined) expect(reply.body.scimType).toBe(scimType);
}

/** An empty ListResponse, all four paging keys and `Resources: []`. */
export function expectEmptyList(reply: Reply): void {
  expect(reply.status, reply.text).toBe(200);
  expect(reply.body).toEqual({
    schemas: [LIST],
    totalResults: 0,
    startIndex: 1,
    itemsPerPage: 0,
    Resources: [],
  });
}

/** GET a user, expecting 200. */
export async function getUser(c: EntraClient, id: string): Promise<Json> {
  const res = await c.get(`/Users/${id}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** GET a group, expecting 200; `query` such as `?excludedAttributes=members`. */
export async function getGroup(c: EntraClient, id: string, query = ''): Promise<Json> {
  const res = await c.get(`/Groups/${id}${query}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** User PATCH answers 200 with the user (README), the same the follow-up GET shows. */
export async function patchUser(
  c: EntraClient,
  id: string,
  operations: Parameters<EntraClient['patch']>[1],
): Promise<Json> {
  const res = await c.patch(`/Users/${id}`, operations);
  expect(res.status, res.text).toBe(200);
  const fetched = await getUser(c, id);
  expect(res.body).toEqual(fetched);
  return fetched;
}

/** Group PATCH answers 204 without a body (what Entra asks for). */
export async function patchGroup(
  c: EntraClient,
  id: string,
  operations: Parameters<EntraClient['patch']>[1],
): Promise<void> {
  const res = await c.patch(`/Groups/${id}`, operations);
  expect(res.status, res.text).toBe(204);
  expect(res.text).toBe('');
}
