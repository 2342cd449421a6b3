// Webhook endpoints through the admin API, as production configures them (private targets refused):
// the event list, creation with its secret shown once, validation, state changes, rotation.
import { createServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { CHANGE_TYPES } from '../../src/changes/changes.js';
import { ADMIN_TOKEN, type Harness, useHarness } from '../helpers/harness.js';
import { expectAdminError } from '../helpers/scim.js';

let harness: Harness;
useHarness((h) => {
  harness = h;
});

const create = (body: Record<string, unknown>) => harness.admin('post', '/webhooks').send(body);

describe('/admin/v1/webhooks', () => {
  it('lists the change types an endpoint may subscribe to', async () => {
    const res = await harness.admin('get', '/webhooks/events').expect(200);
    expect(res.body.events).toEqual([...CHANGE_TYPES]);
  });

  it('creates an endpoint, shows its secret once, and changes it', async () => {
    const created = await create({
      url: 'https://hooks.example.com/scimd',
      events: ['user.created', 'user.deprovisioned'],
      description: 'product',
    }).expect(201);
    expect(created.body).toMatchObject({
      url: 'https://hooks.example.com/scimd',
      events: ['user.created', 'user.deprovisioned'],
      description: 'product',
      orgId: null,
      state: 'active',
      active: true,
      disabledReason: null,
    });
    const secret: string = created.body.secret;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const id = created.body.id;

    const list = await harness.admin('get', '/webhooks').expect(200);
    expect(list.body.webhooks.map((w: { id: string }) => w.id)).toContain(id);
    expect(JSON.stringify(list.body)).not.toContain(secret);
    const shown = await harness.admin('get', `/webhooks/${id}`).expect(200);
    expect(shown.body).toMatchObject({ id, pending: 0 });
    expect(JSON.stringify(shown.body)).not.toContain(secret);
    // Not in the database either: sealed with a key the database does not hold.
    const row = await harness.database.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row.secret_box.toString('latin1')).not.toContain(secret);

    const inactive = await harness.admin('patch', `/webhooks/${id}`).send({ active: false }).expect(200);
    expect(inactive.body).toMatchObject({ state: 'inactive', active: false });
    const changed = await harness
      .admin('patch', `/webhooks/${id}`)
      .send({ active: true, events: ['group.created'], url: 'https://other.example.com/h' })
      .expect(200);
    expect(changed.body).toMatchObject({
      state: 'active',
      events: ['group.created'],
      url: 'https://other.example.com/h',
    });

    const rotated = await harness.admin('post', `/webhooks/${id}/rotate-secret`).send({}).expect(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(secret);

    const deliveries = await harness.admin('get', `/webhooks/${id}/deliveries`).expect(200);
    expect(deliveries.body).toEqual({ deliveries: [], nextCursor: null });
    expectAdminError(
      await harness.admin('post', `/webhooks/${id}/deliveries/1/redeliver`).send({}),
      404,
      'not_found',
    );

    await harness.admin('delete', `/webhooks/${id}`).expect(204);
    expectAdminError(await harness.admin('get', `/webhooks/${id}`), 404, 'not_found');
    expectAdminError(await harness.admin('delete', `/webhooks/${id}`), 404, 'not_found');
  });

  it('scopes an endpoint to one organization, which must exist, and goes with it', async () => {
    const org = await harness.createOrg();
    const created = await create({
      url: 'https://hooks.example.com/a',
      events: ['user.created'],
      orgId: org.id,
    }).expect(201);
    expect(created.body.orgId).toBe(org.id);
    expectAdminError(
      await create({
        url: 'https://hooks.example.com/a',
        events: ['user.created'],
        orgId: '00000000-0000-4000-8000-000000000000',
      }),
      404,
      'not_found',
    );
    await harness.admin('delete', `/orgs/${org.id}`).expect(204);
    expectAdminError(await harness.admin('get', `/webhooks/${created.body.id}`), 404, 'not_found');
  });

  it.each([
    ['http://hooks.example.com/h', 'must be https'],
    ['https://127.0.0.1/h', 'loopback, private or link-local'],
    ['https://10.1.2.3/h', 'loopback, private or link-local'],
    ['https://192.168.0.10/h', 'loopback, private or link-local'],
    ['https://169.254.169.254/latest/meta-data', 'loopback, private or link-local'],
    ['https://[::1]/h', 'loopback, private or link-local'],
    ['https://[::ffff:127.0.0.1]/h', 'loopback, private or link-local'],
    ['https://localhost/h', 'loopback, private or link-local'],
    ['https://user:pw@hooks.example.com/h', 'credentials'],
    ['ftp://hooks.example.com/h', 'must be https'],
    ['not a url', 'absolute URL'],
  ])('refuses %s', async (url, why) => {
    const res = await create({ url, events: ['user.created'] });
    expectAdminError(res, 400, 'invalid_request');
    expect(res.body.error.message).toContain(why);
    // What is refused for safety says what lifts it in development.
    if (/https|loopback/.test(why) && url.startsWith('http'))
      expect(res.body.error.message).toContain('WEBHOOKS_ALLOW_PRIVATE=true lifts this');
  });

  it.each([
    [{ url: 'https://hooks.example.com/h', events: [] }, 'at least one'],
    [{ url: 'https://hooks.example.com/h', events: ['user.exploded'] }, 'user.exploded'],
    [{ url: 'https://hooks.example.com/h', events: ['user.created', 'user.created'] }, 'repeat'],
    [{ url: 'https://hooks.example.com/h' }, 'events'],
    [{ url: 'https://hooks.example.com/h', events: ['user.created'], secret: 'mine' }, 'secret'],
  ])('refuses a body %j', async (body, why) => {
    const res = await create(body);
    expectAdminError(res, 400, 'invalid_request');
    expect(res.body.error.message).toContain(why);
  });

  it('needs the admin token: an API key may not manage webhooks', async () => {
    const key = (await harness.admin('post', '/api-keys').send({ name: 'p' }).expect(201)).body.key;
    const res = await harness.http.get('/admin/v1/webhooks').set('Authorization', `Bearer ${key}`);
    expectAdminError(res, 403, 'forbidden');
  });
});

describe('a POST without a body', () => {
  /** The request as curl sends `-X POST -H 'Content-Type: application/json'`: no Content-Length. */
  async function rawPost(path: string, contentType: string): Promise<string> {
    const server = createServer(harness.callback);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: scimd\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\nContent-Type: ${contentType}\r\nConnection: close\r\n\r\n`,
      );
      let answer = '';
      for await (const chunk of socket) answer += chunk;
      return answer;
    } finally {
      server.close();
    }
  }

  it('is an empty object, whatever its Content-Type says', async () => {
    const created = await harness
      .admin('post', '/webhooks')
      .send({ url: 'https://hooks.example.com/empty', events: ['user.created'] })
      .expect(201);
    for (const type of ['application/json', 'text/plain']) {
      const answer = await rawPost(`/admin/v1/webhooks/${created.body.id}/rotate-secret`, type);
      expect(answer).toMatch(/^HTTP\/1\.1 200 /);
      expect(answer).toMatch(/"secret":"whsec_/);
    }
    const key = await harness.admin('post', '/api-keys').send({ name: 'k' }).expect(201);
    expect(await rawPost(`/admin/v1/api-keys/${key.body.id}/revoke`, 'application/json')).toMatch(
      /^HTTP\/1\.1 200 /,
    );
    // A body of another type is still refused.
    expectAdminError(
      await harness
        .admin('post', `/webhooks/${created.body.id}/rotate-secret`)
        .set('Content-Type', 'text/plain')
        .send('x'),
      415,
      'unsupported_media_type',
    );
  });
});
