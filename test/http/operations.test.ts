// Health, readiness and what reaches the logs.
import { Writable } from 'node:stream';
import supertest from 'supertest';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { AuditLog } from '../../src/audit/audit-log.js';
import { createLogger } from '../../src/log.js';
import { createTestDatabase } from '../helpers/database.js';
import { ADMIN_TOKEN, PUBLIC_URL } from '../helpers/harness.js';

function captureLogs() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: createLogger('debug', stream), text: () => lines.join('') };
}

/** An app on its own database whose log lines the test can read. */
async function appWithLogs() {
  const database = await createTestDatabase();
  const logs = captureLogs();
  const app = createApp({
    database,
    publicUrl: PUBLIC_URL,
    adminToken: ADMIN_TOKEN,
    logger: logs.logger,
  });
  return { database, logs, http: supertest(app.callback()) };
}

describe('operations', () => {
  it('answers /healthz and /readyz, then 503 on /readyz once the database is gone, and logs no secret', async () => {
    const { database, logs, http } = await appWithLogs();
    await http.get('/healthz').expect(200);
    await http.get('/readyz').expect(200);

    const org = await http
      .post('/admin/v1/orgs')
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({ name: 'Logs' })
      .expect(201);
    const token = (
      await http
        .post(`/admin/v1/orgs/${org.body.id}/tokens`)
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
        .send({})
        .expect(201)
    ).body.token as string;
    await http
      .get(`/scim/v2/${org.body.id}/Users?filter=userName eq "private.person@corp.example"`)
      .set('Authorization', `Bearer ${token}`)
      .set('X-Request-Id', 'req-123');
    logs.logger.info({ req: { headers: { authorization: `Bearer ${token}` } }, token }, 'a careless line');

    const text = logs.text();
    expect(text).toContain('req-123');
    expect(text).not.toContain(token);
    expect(text).not.toContain(token.slice(6, 20));
    expect(text).not.toContain(ADMIN_TOKEN);
    expect(text).not.toContain('private.person');

    await database.close();
    const res = await http.get('/readyz').expect(503);
    expect(res.body.status).toMatch(/unavailable/);
    await http.get('/healthz').expect(200);
  });

  it('keeps an admin change that committed a success when its audit entry cannot be written, and logs why', async () => {
    const database = await createTestDatabase();
    const logs = captureLogs();
    // The audit log writes to a database that is gone: every entry fails, nothing else does.
    const gone = await createTestDatabase();
    await gone.close();
    const app = createApp({
      database,
      publicUrl: PUBLIC_URL,
      adminToken: ADMIN_TOKEN,
      logger: logs.logger,
      audit: new AuditLog(gone.db, logs.logger),
    });
    const admin = (method: 'get' | 'post', path: string) =>
      supertest(app.callback())[method](`/admin/v1${path}`).set('Authorization', `Bearer ${ADMIN_TOKEN}`);
    try {
      const org = (await admin('post', '/orgs').send({ name: 'Unaudited' }).expect(201)).body;
      await admin('get', `/orgs/${org.id}`).expect(200);
      const token = (await admin('post', `/orgs/${org.id}/tokens`).send({}).expect(201)).body.token;
      expect(token).toMatch(/^scimd_/);
      // A failed request still answers with its own error, not with the audit's.
      await admin('post', `/orgs/${org.id}/tokens`)
        .send({ scopes: ['nothing'] })
        .expect(400);
      const text = logs.text();
      expect(text.match(/could not write an audit entry/g)).toHaveLength(3);
      expect(text).not.toContain(token);
      expect(text).not.toContain(ADMIN_TOKEN);
    } finally {
      await database.close();
    }
  });
});
