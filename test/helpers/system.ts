// Running the database servers tests start themselves (a throwaway Postgres cluster, PgBouncer):
// Postgres and PgBouncer refuse to run as root, so as root they run as the postgres user.
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const asRoot = process.getuid?.() === 0;

/** Runs a command line as the postgres user (as is, when not root); returns what it printed. */
export function runAsPostgres(command: string): string {
  return asRoot
    ? execFileSync('su', ['postgres', '-s', '/bin/sh', '-c', command], { encoding: 'utf8' })
    : execFileSync('/bin/sh', ['-c', command], { encoding: 'utf8' });
}

/** A fresh directory the postgres user may write. */
export function postgresDirectory(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  return dir;
}

/** The newest installed Postgres's bin directory, if any. */
export function postgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(a) - Number(b));
  return versions.length > 0 ? join(root, versions.at(-1)!, 'bin') : undefined;
}

export function commandExists(name: string): boolean {
  try {
    execFileSync('/bin/sh', ['-c', `command -v ${name}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `check` holds, asking every 50 ms; fails after `timeoutMs`. */
export async function until(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`still not so after ${timeoutMs} ms`);
    await sleep(50);
  }
}
