// The server as a process would run it: serve() on embedded PGlite in a data directory, a second
// process refused on the same directory, and a graceful stop that lets an in-flight request finish.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main as cliMain } from '../src/cli.js';
import { readConfig } from '../src/config.js';
import { serve } from '../src/index.js';
import { runModule } from './helpers/child-module.js';

interface Running {
  dataDir: string;
  port: number;
  stop: () => Promise<void>;
}
const started: Running[] = [];

/** serve() on PGlite in a fresh data directory, stopped and removed after the file's tests. */
async function start(): Promise<Running> {
  const dataDir = mkdtempSync(join(tmpdir(), 'scimd-serve-'));
  const config = readConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  const server = await serve(config);
  let stopping: Promise<void> | undefined;
  const running = {
    dataDir,
    port: (server.server.address() as AddressInfo).port,
    stop: () => {
      stopping ??= server.stop();
      return stopping;
    },
  };
  started.push(running);
  return running;
}

afterAll(async () => {
  for (const running of started) {
    await running.stop();
    rmSync(running.dataDir, { recursive: true, force: true });
  }
});

function call(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('serve', () => {
  let running: Running;
  beforeAll(async () => {
    running = await start();
  });

  it('answers /healthz and /readyz, and wrote the admin token file with mode 0600', async () => {
    const { port, dataDir } = running;
    expect((await call(port, 'GET', '/healthz')).status).toBe(200);
    expect((await call(port, 'GET', '/readyz')).status).toBe(200);
    const tokenFile = join(dataDir, 'admin-token');
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    const adminToken = readFileSync(tokenFile, 'utf8').trim();
    const orgs = await call(port, 'GET', '/admin/v1/orgs', { Authorization: `Bearer ${adminToken}` });
    expect(orgs.status).toBe(200);
  });

  it('tells the CLI, run on the same data folder, where it serves, whatever its PORT', async () => {
    const { port, dataDir } = running;
    expect(readFileSync(join(dataDir, 'serving-at'), 'utf8').trim()).toBe(`http://localhost:${port}`);
    let out = '';
    const code = await cliMain(['org', 'list', '--json'], {
      out: (text) => {
        out += text;
      },
      err: () => {},
      env: { DATA_DIR: dataDir },
    });
    expect(code).toBe(0);
    expect(JSON.parse(out)).toHaveProperty('orgs');
  });

  it('refuses to start with an admin token shorter than 32 characters, saying how to make one', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'scimd-weak-'));
    try {
      const weak = readConfig({ PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent', SCIMD_ADMIN_TOKEN: 'a' });
      await expect(serve(weak)).rejects.toThrow(
        /SCIMD_ADMIN_TOKEN is 1 characters long; the admin token must be at least 32\. Make one with: openssl rand -base64 32/,
      );
      const child = runModule("const { main } = await import('./src/index.ts'); await main();", {
        ...process.env,
        DATA_DIR: dataDir,
        DATABASE_URL: '',
        PORT: '0',
        SCIMD_ADMIN_TOKEN: 'short-but-not-that-short-012345',
      });
      expect(child.status).toBe(1);
      expect(child.stderr).toMatch(/^scimd: SCIMD_ADMIN_TOKEN is 31 characters long/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('refuses a second process on the same PGlite directory with a clear message', () => {
    const child = runModule(
      "const { main } = await import('./src/cli.ts'); process.exitCode = await main(['migrate']);",
      { ...process.env, DATA_DIR: running.dataDir, DATABASE_URL: '' },
    );
    expect(child.status).toBe(1);
    expect(child.stderr).toMatch(/in use by another scimd process \(pid \d+\)/);
    expect(child.stderr).toMatch(/DATABASE_URL/);
    expect(child.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
  });

  it('stops gracefully: an in-flight request finishes, then the port closes and the lock is released', async () => {
    const running = await start();
    const { port, dataDir } = running;
    const adminToken = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
    // Send the headers and half the body, stop the server, then send the rest.
    const body = JSON.stringify({ name: 'In flight' });
    const inFlight = new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/admin/v1/orgs',
          headers: {
            Authorization: `Bearer ${adminToken}`,
            'Content-Type': 'application/json',
            'Content-Length': Buffer.byteLength(body),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.write(body.slice(0, 5));
      setTimeout(() => {
        stopped = running.stop();
        setTimeout(() => req.end(body.slice(5)), 200);
      }, 200);
    });
    let stopped: Promise<void> | undefined;
    expect(await inFlight).toBe(201);
    await stopped;
    await expect(call(port, 'GET', '/healthz')).rejects.toThrow(/ECONNREFUSED/);
    expect(existsSync(join(dataDir, 'scimd.lock'))).toBe(false);
    expect(existsSync(join(dataDir, 'serving-at'))).toBe(false);
  });
});
