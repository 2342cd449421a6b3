import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/**
 * PGlite is a single-process database: two processes writing one data directory silently lose
 * writes. The lock file holds the pid of the owner; a second process is refused while that pid lives.
 */
export class DataDirLockedError extends Error {}

export function lockDataDir(dir: string): () => void {
  const path = join(dir, 'scimd.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number.parseInt(readFileSync(path, 'utf8'), 10);
      if (Number.isInteger(owner) && owner !== process.pid && isAlive(owner)) {
        throw new DataDirLockedError(
          `The embedded database in ${dir} is in use by another scimd process (pid ${owner}). ` +
            'PGlite serves one process only: stop that process, or set DATABASE_URL to use Postgres.',
        );
      }
      if (owner === process.pid) {
        throw new DataDirLockedError(`The embedded database in ${dir} is already open in this process.`);
      }
      // The owner is gone (a crash or kill -9): the lock is stale.
      rmSync(path, { force: true });
    }
  }
  throw new DataDirLockedError(`Could not lock ${path}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
