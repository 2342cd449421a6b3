// Run inside an empty project where the packed scimd was installed: imports the three entry points,
// serves SCIM through createScimd on node:http, reads the change with the feed client and verifies a
// signed webhook delivery with verifyWebhook. Exits non-zero on the first thing that does not hold.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { verifyWebhook } from 'scimd';
import { CursorExpired, FeedClient } from 'scimd/client';
import { createScimd } from 'scimd/server';

assert.equal(typeof CursorExpired, 'function');
const adminToken = randomBytes(32).toString('base64url');
const listen = (server) =>
  new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));

// A receiver for the webhook: keeps the first delivery's raw body and headers.
let delivered;
const received = new Promise((resolve) => {
  delivered = resolve;
});
const receiver = createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    res.end();
    delivered({ body, headers: req.headers });
  });
});
const receiverPort = await listen(receiver);

let scimd;
const app = createServer((req, res) => scimd.handler(req, res));
const port = await listen(app);
const root = `http://127.0.0.1:${port}/identity`;
scimd = await createScimd({
  publicUrl: root,
  adminToken,
  dataDir: process.env.SCIMD_DATA_DIR,
  logLevel: 'warn',
  settings: { WEBHOOKS_ALLOW_PRIVATE: 'true' },
});

async function call(method, path, body, token = adminToken) {
  const res = await fetch(`${root}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body
        ? { 'content-type': path.startsWith('/scim/') ? 'application/scim+json' : 'application/json' }
        : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

const org = await call('POST', '/admin/v1/orgs', { name: 'Install test' });
assert.equal(org.scimBaseUrl, `${root}/scim/v2/${org.id}`);
const { token } = await call('POST', `/admin/v1/orgs/${org.id}/tokens`, { name: 'okta' });
const hook = await call('POST', '/admin/v1/webhooks', {
  url: `http://127.0.0.1:${receiverPort}/hook`,
  events: ['user.created'],
});
const { key } = await call('POST', '/admin/v1/api-keys', { name: 'product' });

const user = await call(
  'POST',
  `/scim/v2/${org.id}/Users`,
  { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'ada@example.com', active: true },
  token,
);
console.log(`createScimd: POST /Users → ${user.id}`);

const feed = new FeedClient({ url: root, apiKey: key });
const stop = new AbortController();
for await (const change of feed.follow({ orgId: org.id, signal: stop.signal })) {
  assert.equal(change.type, 'user.created');
  assert.equal(change.resourceId ?? change.data?.id, user.id);
  console.log(`scimd/client: read ${change.type}`);
  stop.abort();
}

const { body, headers } = await received;
const verified = verifyWebhook(body, headers, hook.secret);
assert.ok(verified.ok, `verifyWebhook: ${JSON.stringify(verified)}`);
assert.equal(verified.event, 'user.created');
console.log(`scimd: verifyWebhook accepted delivery ${verified.deliveryId}`);

await scimd.close();
app.close();
receiver.close();
