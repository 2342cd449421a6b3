// config → database → migrate → createApp → listen; SIGTERM/SIGINT stop gracefully.
import type { Server } from 'node:http';
import { resolveAdminToken } from './admin-token.js';
import { createApp } from './app.js';
import { followAuthChanges } from './auth/auth-changes.js';
import type { TokenChecks } from './auth/scim-auth.js';
import { TokenCache } from './auth/token-cache.js';
import { type Config, readConfig } from './config.js';
import { openDatabase } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { createLogger } from './log.js';

export async function serve(
  config: Config = readConfig(),
): Promise<{ server: Server; stop: () => Promise<void> }> {
  const logger = createLogger(config.logLevel);
  const database = await openDatabase({ databaseUrl: config.databaseUrl, pgliteDir: config.dataDir });
  const applied = await migrateToLatest(database.db);
  if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');
  const admin = resolveAdminToken(config.adminToken, config.dataDir);
  if (admin.generatedAt)
    logger.info({ path: admin.generatedAt }, 'generated the admin token; it is in this file');
  else if (admin.path) logger.info({ path: admin.path }, 'admin token read from file');

  const tokenChecks: TokenChecks = new TokenCache();
  const listening = followAuthChanges(database, tokenChecks, logger);
  await listening?.ready;
  const app = createApp({
    db: database.db,
    ping: database.ping,
    publicUrl: config.publicUrl,
    adminToken: admin.token,
    logger,
    tokenChecks,
  });
  const server = app.listen(config.port, config.host);
  // Keep idle connections longer than a load balancer does (60 s is common): otherwise the server
  // closes a socket the balancer is about to reuse, and the client sees a reset or a 502.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  logger.info(
    { port: config.port, host: config.host, database: database.kind, publicUrl: config.publicUrl },
    'scimd is serving',
  );

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      logger.info('stopping: finishing in-flight requests');
      // close() stops accepting and resolves once in-flight requests have finished.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await closed;
      await listening?.stop();
      await database.close();
      logger.info('stopped');
    })();
    return stopping;
  };
  return { server, stop };
}

export async function main(): Promise<void> {
  let config: Config;
  try {
    config = readConfig();
  } catch (error) {
    console.error(`scimd: ${(error as Error).message}`);
    process.exit(2);
  }
  try {
    const { stop } = await serve(config);
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.once(signal, () => {
        stop().then(
          () => process.exit(0),
          (error) => {
            console.error(error);
            process.exit(1);
          },
        );
      });
    }
  } catch (error) {
    console.error(`scimd: ${(error as Error).message}`);
    process.exit(1);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
