// A client of a scimd reached over HTTP (a child process, or a server on a port): the admin API with
// the admin token, and an organization's SCIM API with one of its tokens.
export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever JSON came back.
  readonly body: any;
}

async function call(
  url: string,
  method: string,
  token: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await fetch(url, {
    method,
    headers: {
      Authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'Content-Type': 'application/scim+json' } : {}),
      ...headers,
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

export interface RemoteTenant {
  readonly orgId: string;
  readonly tokenId: string;
  readonly token: string;
  scim(method: string, path: string, body?: unknown): Promise<Answer>;
}

export function remote(origin: string, adminToken: string) {
  const admin = async (method: string, path: string, body?: unknown): Promise<Answer> =>
    call(`${origin}/admin/v1${path}`, method, adminToken, body, { 'Content-Type': 'application/json' });
  /** An organization's SCIM API with one of its tokens, at `at` (another process, say). */
  const as = (orgId: string, tokenId: string, token: string, at = origin): RemoteTenant => ({
    orgId,
    tokenId,
    token,
    scim: (method, path, body) => call(`${at}/scim/v2/${orgId}${path}`, method, token, body),
  });
  /** A new organization (group sync on) and a token of both scopes. */
  const tenant = async (name = 'Remote'): Promise<RemoteTenant> => {
    const org = await admin('POST', '/orgs', { name, groupSync: true });
    if (org.status !== 201) throw new Error(`org: ${org.status} ${JSON.stringify(org.body)}`);
    const token = await admin('POST', `/orgs/${org.body.id}/tokens`, { name: 'idp' });
    if (token.status !== 201) throw new Error(`token: ${token.status} ${JSON.stringify(token.body)}`);
    return as(org.body.id, token.body.id, token.body.token);
  };
  return { admin, as, tenant };
}

export const newUser = (userName: string) => ({
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
  userName,
  name: { givenName: 'Ada', familyName: 'Lovelace' },
  emails: [{ value: userName, type: 'work', primary: true }],
  active: true,
});

/**
 * Revokes the tenant's token through the process at `admin` and asks the process at `other` until it
 * refuses the token (401). Returns how long that took; fails after 3 s, well before the 5 s for which
 * a process trusts a remembered token check, so a pass shows that the change was heard.
 */
export async function revocationHeardAt(
  admin: string,
  other: string,
  adminToken: string,
  tenant: RemoteTenant,
) {
  const elsewhere = remote(other, adminToken).as(tenant.orgId, tenant.tokenId, tenant.token);
  const before = await elsewhere.scim('GET', '/Users');
  if (before.status !== 200) throw new Error(`the token did not work at ${other}: ${before.status}`);
  const revoked = await remote(admin, adminToken).admin(
    'POST',
    `/orgs/${tenant.orgId}/tokens/${tenant.tokenId}/revoke`,
    {},
  );
  if (revoked.status !== 200) throw new Error(`revoke: ${revoked.status}`);
  const started = Date.now();
  while (Date.now() - started < 3000) {
    if ((await elsewhere.scim('GET', '/Users')).status === 401) return Date.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`${other} still accepted the revoked token after 3 s`);
}
