// The scimd command line against a running server: every admin command, tables and --json, errors
// and exit codes.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli.js';
import { LIVE_ADMIN_TOKEN as ADMIN, useLiveServer } from './conformance/live-server.js';

const live = useLiveServer();

async function run(argv: string[], env: Record<string, string> = {}) {
  let out = '';
  let err = '';
  const code = await main(argv, {
    out: (t) => {
      out += t;
    },
    err: (t) => {
      err += t;
    },
    env: { SCIMD_URL: live.origin, SCIMD_ADMIN_TOKEN: ADMIN, ...env },
  });
  return { code, out, err };
}

async function json(argv: string[]) {
  const result = await run([...argv, '--json']);
  expect(result.code, result.err).toBe(0);
  return JSON.parse(result.out);
}

describe('scimd CLI', () => {
  it('prints its version', async () => {
    const { version } = JSON.parse(readFileSync(join(import.meta.dirname, '../package.json'), 'utf8'));
    for (const flag of ['--version', '-v']) {
      const result = await run([flag]);
      expect(result).toEqual({ code: 0, out: `${version}\n`, err: '' });
    }
  });

  it('creates, lists, shows, updates and deletes an organization', async () => {
    const created = await run([
      'org',
      'create',
      '--name',
      'Acme CLI',
      '--group-sync',
      'true',
      '--deprovisioning',
      'anonymize',
    ]);
    expect(created.code).toBe(0);
    expect(created.out).toMatch(/^id +[0-9a-f-]{36}$/m);
    expect(created.out).toMatch(
      new RegExp(`^scimBaseUrl +${live.origin.replace(/[.]/g, '\\.')}/scim/v2/[0-9a-f-]{36}$`, 'm'),
    );
    const id = /^id +(\S+)$/m.exec(created.out)![1]!;

    const list = await run(['org', 'list']);
    expect(list.out.split('\n')[0]).toMatch(/^id +name +groupSync +deprovisioning +scimBaseUrl$/);
    expect(list.out).toContain('Acme CLI');
    expect((await json(['org', 'list'])).orgs.map((o: { id: string }) => o.id)).toContain(id);

    expect(await json(['org', 'show', id])).toMatchObject({
      id,
      name: 'Acme CLI',
      groupSync: true,
      deprovisioning: 'anonymize',
    });
    expect(await json(['org', 'update', id, '--group-sync', 'false', '--name', 'Acme 2'])).toMatchObject({
      name: 'Acme 2',
      groupSync: false,
    });

    const refused = await run(['org', 'delete', id]);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/--yes/);
    expect((await run(['org', 'delete', id, '--yes'])).code).toBe(0);
    const gone = await run(['org', 'show', id]);
    expect(gone.code).toBe(1);
    expect(gone.err).toMatch(/404/);
  });

  it('issues, lists, rotates and revokes tokens, and reads the audit log', async () => {
    const org = await json(['org', 'create', '--name', 'Tokens CLI']);
    const created = await run(['token', 'create', org.id, '--name', 'okta', '--scopes', 'users']);
    expect(created.code).toBe(0);
    const secret = /^ {2}(scimd_\S+)$/m.exec(created.out)![1]!;
    expect(created.out).toMatch(/shown only now/);
    const token = await json(['token', 'list', org.id]);
    expect(token.tokens).toHaveLength(1);
    expect(JSON.stringify(token)).not.toContain(secret);
    const tokenId = token.tokens[0].id;
    const table = await run(['token', 'list', org.id]);
    expect(table.out).toContain('okta');
    expect(table.out).not.toContain(secret);

    const rotated = await json(['token', 'rotate', org.id, tokenId, '--overlap', '3600']);
    expect(rotated).toMatchObject({
      replaces: tokenId,
      scopes: ['users'],
      token: expect.stringMatching(/^scimd_/),
    });

    // The guard: the replacement has not served a request yet.
    const guarded = await run(['token', 'revoke', org.id, tokenId]);
    expect(guarded.code).toBe(1);
    expect(guarded.err).toMatch(/409.*has not served a successful request/);
    const res = await fetch(`${live.origin}/scim/v2/${org.id}/Users`, {
      headers: { Authorization: `Bearer ${rotated.token}` },
    });
    expect(res.status).toBe(200);
    const revoked = await json(['token', 'revoke', org.id, tokenId]);
    expect(revoked.revokedAt).toEqual(expect.any(String));

    const events = await json(['events', org.id, '--limit', '2']);
    expect(events.events.map((e: { action: string }) => e.action)).toEqual(['token.revoke', 'token.revoke']);
    expect(events.events.map((e: { status: number }) => e.status)).toEqual([200, 409]);
    expect(events.nextCursor).toEqual(expect.any(String));
    const human = await run(['events', org.id, '--limit', '2']);
    expect(human.out).toMatch(/^at +actor +action +resourceType +resourceId +status$/m);
    expect(human.out).toContain(`--cursor ${events.nextCursor}`);
    const older = await json(['events', org.id, '--cursor', events.nextCursor]);
    expect(older.events.map((e: { action: string }) => e.action)).toEqual([
      'token.rotate',
      'token.create',
      'org.create',
    ]);
  });

  it('answers usage errors with 2, refusals with 1, an unreachable server with 3', async () => {
    expect((await run([])).code).toBe(2);
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/token rotate/);
    const sub = await run(['token', 'rotate', '--help']);
    expect(sub.code).toBe(0);
    expect(sub.out).toMatch(/Usage: scimd token rotate ORG_ID TOKEN_ID/);
    expect((await run(['frobnicate'])).code).toBe(2);
    expect((await run(['org', 'create'])).err).toMatch(/--name is required/);
    expect((await run(['org', 'create', '--name', 'x', '--bogus'])).code).toBe(2);
    expect((await run(['org', 'show'])).code).toBe(2);
    expect((await run(['token', 'rotate', 'a', 'b', '--overlap', 'soon'])).code).toBe(2);
    const bad = await run(['org', 'create', '--name', 'x', '--deprovisioning', 'wipe']);
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/400.*deprovisioning/);
    const wrongToken = await run(['org', 'list'], { SCIMD_ADMIN_TOKEN: 'bad-token-9f8e7d' });
    expect(wrongToken.code).toBe(1);
    expect(wrongToken.err).toMatch(/401/);
    expect(wrongToken.err).not.toContain('bad-token-9f8e7d');
    const down = await run(['org', 'list'], { SCIMD_URL: 'http://127.0.0.1:9' });
    expect(down.code).toBe(3);
    expect(down.err).toMatch(/Cannot reach scimd at http:\/\/127\.0\.0\.1:9/);
  });

  it('reads the admin token from $DATA_DIR/admin-token when the variable is unset', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'scimd-cli-'));
    writeFileSync(join(dir, 'admin-token'), `${ADMIN}\n`);
    const result = await run(['org', 'list', '--json'], { SCIMD_ADMIN_TOKEN: '', DATA_DIR: dir });
    expect(result.code, result.err).toBe(0);
    const missing = await run(['org', 'list'], { SCIMD_ADMIN_TOKEN: '', DATA_DIR: join(dir, 'nowhere') });
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/No admin token/);
  });
});

describe('scimd changes and api-key', () => {
  it('prints the feed, follows it as changes arrive, and reads it with a read-only key', async () => {
    const org = await json(['org', 'create', '--name', 'Feed CLI']);
    const token = await json(['token', 'create', org.id]);
    const scim = (method: string, path: string, body: unknown) =>
      fetch(`${live.origin}/scim/v2/${org.id}${path}`, {
        method,
        headers: { Authorization: `Bearer ${token.token}`, 'Content-Type': 'application/scim+json' },
        body: JSON.stringify(body),
      });
    const user = (userName: string) => ({
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName,
    });
    expect((await scim('POST', '/Users', user('cli-one'))).status).toBe(201);

    const all = await json(['changes', '--org', org.id]);
    expect(all.changes.map((c: { type: string }) => c.type)).toEqual(['user.created']);
    const human = await run(['changes', '--org', org.id]);
    expect(human.out).toMatch(/^cursor +occurredAt +type +orgId +resourceId +changedAttributes$/m);
    expect(human.out).toContain(`next: --after ${all.nextCursor}`);

    const created = await run(['api-key', 'create', '--name', 'product']);
    expect(created.code, created.err).toBe(0);
    const key = /^ {2}(scimdkey_\S+)$/m.exec(created.out)![1]!;
    const keys = await json(['api-key', 'list']);
    const listed = keys.apiKeys.find((k: { name: string }) => k.name === 'product');
    expect(JSON.stringify(keys)).not.toContain(key);

    // Following with the key alone (no admin token), one JSON line per change as it arrives.
    const stop = new AbortController();
    let out = '';
    const following = main(['changes', '--org', org.id, '--after', all.nextCursor, '--follow', '--json'], {
      out: (t) => {
        out += t;
      },
      err: () => {},
      env: { SCIMD_URL: live.origin, SCIMD_API_KEY: key, SCIMD_ADMIN_TOKEN: 'not-the-admin-token' },
      signal: stop.signal,
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await scim('POST', '/Users', user('cli-two'))).status).toBe(201);
    const deadline = Date.now() + 10_000;
    while (!out.includes('\n') && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    stop.abort();
    expect(await following).toBe(0);
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((c) => [c.type, c.data.user_name])).toEqual([['user.created', 'cli-two']]);

    const revoked = await json(['api-key', 'revoke', listed.id]);
    expect(revoked.revokedAt).toEqual(expect.any(String));
    const refused = await run(['changes', '--org', org.id], { SCIMD_API_KEY: key });
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/401/);
  });
});

describe('scimd webhook', () => {
  it('creates, lists, changes, rotates, shows deliveries of and deletes an endpoint', async () => {
    const created = await run([
      'webhook',
      'create',
      '--url',
      'https://hooks.example.com/cli',
      '--events',
      'user.created,group.created',
    ]);
    expect(created.code, created.err).toBe(0);
    const secret = /^ {2}(whsec_\S+)$/m.exec(created.out)![1]!;
    expect(created.out).toMatch(/shown only now; scimd keeps it encrypted/);
    expect(created.out).not.toMatch(/hash|old secret/);
    const listed = await json(['webhook', 'list']);
    const hook = listed.webhooks.find((w: { url: string }) => w.url === 'https://hooks.example.com/cli');
    expect(hook).toMatchObject({ events: ['user.created', 'group.created'], state: 'active' });
    expect(JSON.stringify(listed)).not.toContain(secret);
    expect((await run(['webhook', 'list'])).out).toMatch(/^id +state +url +events +orgId +description$/m);
    expect((await json(['webhook', 'events'])).events).toContain('user.deprovisioned');

    const paused = await json(['webhook', 'update', hook.id, '--active', 'false', '--description', 'paused']);
    expect(paused).toMatchObject({ state: 'inactive', description: 'paused' });
    const rotated = await json(['webhook', 'rotate-secret', hook.id]);
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(secret);
    expect(await json(['webhook', 'deliveries', hook.id])).toEqual({ deliveries: [], nextCursor: null });

    const refused = await run([
      'webhook',
      'create',
      '--url',
      'http://127.0.0.1:9/x',
      '--events',
      'user.created',
    ]);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/400.*url/);
    expect(refused.err).toMatch(/WEBHOOKS_ALLOW_PRIVATE=true lifts this/);
    const rotatedText = await run(['webhook', 'rotate-secret', hook.id]);
    expect(rotatedText.out).toMatch(/keeps it encrypted[\s\S]*The old secret signs nothing sent from now on/);
    expect((await run(['webhook', 'delete', hook.id])).code).toBe(2);
    expect((await json(['webhook', 'delete', hook.id, '--yes'])).deleted).toBe(hook.id);
  });
});

describe('scimd schema', () => {
  it("puts an organization's own schema from a file, lists, shows and deletes it, and says what is wrong", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'scimd-cli-schema-'));
    try {
      const org = await json(['org', 'create', '--name', 'Schema CLI']);
      const urn = 'urn:ietf:params:scim:schemas:extension:acme:2.0:User';
      const file = join(dir, 'acme.json');
      writeFileSync(file, JSON.stringify({ id: urn, attributes: [{ name: 'costCenter', type: 'string' }] }));
      const put = await run(['schema', 'put', org.id, file]);
      expect(put.code, put.err).toBe(0);
      expect(put.out).toMatch(/^attributes +costCenter$/m);
      expect((await run(['schema', 'list', org.id])).out).toMatch(
        /^id +resourceType +attributes +updatedAt$/m,
      );
      expect((await json(['schema', 'list', org.id])).schemas[0]).toMatchObject({
        id: urn,
        resourceType: 'User',
      });
      const shown = JSON.parse((await run(['schema', 'show', org.id, urn])).out);
      expect(shown.attributes[0]).toMatchObject({ name: 'costCenter', caseExact: false, uniqueness: 'none' });

      writeFileSync(file, JSON.stringify({ id: urn, attributes: [{ name: 'costCenter', type: 'blob' }] }));
      const refused = await run(['schema', 'put', org.id, file]);
      expect(refused.code).toBe(1);
      expect(refused.err).toMatch(/400.*attributes\.0\.type/);
      writeFileSync(file, 'not json');
      expect((await run(['schema', 'put', org.id, file])).err).toMatch(/is not JSON/);

      expect((await json(['schema', 'delete', org.id, urn])).deleted).toBe(urn);
      expect((await json(['schema', 'list', org.id])).schemas).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('scimd org health', () => {
  it("prints an organization's state, tokens, requests and failed requests with their hints", async () => {
    const org = await json(['org', 'create', '--name', 'Health CLI']);
    expect((await json(['org', 'health', org.id])).state).toBe('never_connected');
    const token = await json(['token', 'create', org.id, '--name', 'Entra']);
    const res = await fetch(`${live.origin}/scim/v2/${org.id}/Groups`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token.token}`, 'content-type': 'application/scim+json' },
      body: JSON.stringify({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'All' }),
    });
    expect(res.status).toBe(403);
    const shown = await run(['org', 'health', org.id]);
    expect(shown.code, shown.err).toBe(0);
    expect(shown.out).toMatch(/^state +healthy$/m);
    expect(shown.out).toMatch(/^groups\.create +client_error 1 +client_error 1$/m);
    expect(shown.out).toMatch(/POST \/Groups {2}403 {2}request \S+\n {2}Group synchronization is disabled/);
    expect(shown.out).toMatch(/^ {2}hint: Group sync is off/m);
    expect((await run(['org', 'health', org.id, '--failures', 'many'])).code).toBe(2);
  });
});

describe('scimd setup-link', () => {
  it('creates a link shown once, lists it without it, and revokes it', async () => {
    const org = await json(['org', 'create', '--name', 'Setup CLI']);
    const created = await run(['setup-link', 'create', org.id, '--hours', '2', '--note', 'for IT']);
    expect(created.code, created.err).toBe(0);
    const url = /^ {2}(http\S+\/console\/link\/scimdsetup_\S+)$/m.exec(created.out)?.[1];
    expect(url).toBeDefined();
    expect((await fetch(url!)).status).toBe(200);
    const listed = await json(['setup-link', 'list', org.id]);
    expect(listed.setupLinks).toHaveLength(1);
    expect(listed.setupLinks[0]).toMatchObject({ state: 'active', note: 'for IT', createdBy: 'admin' });
    expect(JSON.stringify(listed)).not.toContain(url);
    const table = await run(['setup-link', 'list', org.id]);
    expect(table.out).toMatch(/active +scimdsetup_\S+ +for IT/);
    const revoked = await json(['setup-link', 'revoke', org.id, listed.setupLinks[0].id]);
    expect(revoked.state).toBe('revoked');
    expect((await fetch(url!)).status).toBe(404);
    expect((await run(['setup-link', 'create', org.id, '--hours', 'soon'])).code).toBe(2);
  });
});
