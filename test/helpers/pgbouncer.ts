// PgBouncer from Debian's package, in transaction mode, in front of a Postgres server: what a
// production deployment often puts between scimd and its database.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { commandExists, freePort, postgresDirectory, runAsPostgres, sleep } from './system.js';

export interface PgBouncer {
  /** The connection string of `database` through PgBouncer. */
  url(database: string): string;
  stop(): Promise<void>;
}

export const canStartPgBouncer = commandExists('pgbouncer');

/**
 * Starts PgBouncer on a free loopback port, forwarding every database name to the server of
 * `serverUrl` (as its user, trusted), in transaction mode with a small server pool, so that one
 * client's statements land on different server connections.
 */
export async function startPgBouncer(serverUrl: string, poolSize = 4): Promise<PgBouncer> {
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username || 'postgres');
  const dir = postgresDirectory('scimd-pgbouncer-');
  const port = await freePort();
  writeFileSync(join(dir, 'users.txt'), `"${user}" ""\n`);
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      "unix_socket_dir = ''",
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${poolSize}`,
      'max_client_conn = 500',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      `pidfile = ${join(dir, 'pgbouncer.pid')}`,
      '',
    ].join('\n'),
  );
  runAsPostgres(`pgbouncer -d ${join(dir, 'pgbouncer.ini')}`);
  // -d returns once it has daemonized; wait until it accepts connections.
  for (let i = 0; i < 100; i++) {
    try {
      readFileSync(join(dir, 'pgbouncer.pid'));
      break;
    } catch {
      await sleep(50);
    }
  }
  return {
    url: (database) => `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/${database}`,
    stop: async () => {
      try {
        const pid = Number(readFileSync(join(dir, 'pgbouncer.pid'), 'utf8'));
        process.kill(pid, 'SIGINT');
        for (let i = 0; i < 100; i++) {
          try {
            process.kill(pid, 0);
            await sleep(20);
          } catch {
            break;
          }
        }
      } catch {
        // Already gone.
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
