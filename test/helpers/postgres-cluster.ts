// A throwaway Postgres cluster of a test's own, on a free loopback port: one the test may stop,
// crash and start again without touching the server every other test uses.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, postgresBin, postgresDirectory, runAsPostgres } from './system.js';

export interface Cluster {
  /** A connection string to the cluster's `postgres` database. */
  readonly url: string;
  readonly port: number;
  start(): void;
  /** `immediate` is a crash: no checkpoint, connections cut (pg_ctl stop -m immediate). */
  stop(mode: 'fast' | 'immediate'): void;
  destroy(): void;
}

/** Whether this machine can start a cluster of its own (Postgres's binaries are installed). */
export const canStartCluster = postgresBin() !== undefined;

export async function startCluster(): Promise<Cluster> {
  const bin = postgresBin();
  if (!bin) throw new Error('no Postgres binaries under /usr/lib/postgresql');
  const dir = postgresDirectory('scimd-cluster-');
  const data = join(dir, 'data');
  const port = await freePort();
  runAsPostgres(`${bin}/initdb -D ${data} -U postgres --auth=trust --no-sync >/dev/null`);
  const pgCtl = `${bin}/pg_ctl -D ${data}`;
  const cluster: Cluster = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start: () => {
      runAsPostgres(
        `${pgCtl} -o "-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=on" -l ${dir}/log -w start >/dev/null`,
      );
    },
    stop: (mode) => {
      runAsPostgres(`${pgCtl} -m ${mode} -w stop >/dev/null`);
    },
    destroy: () => {
      try {
        runAsPostgres(`${pgCtl} -m immediate stop >/dev/null 2>&1 || true`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
  cluster.start();
  return cluster;
}
