// config → database → migrate → createApp → listen; SIGTERM/SIGINT stop gracefully.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolveAdminToken } from './admin-token.js';
import { createApp } from './app.js';
import { ChangeFeed } from './changes/change-feed.js';
import { type Config, databaseOptions, readConfig } from './config.js';
import { openDatabase } from './db/database.js';
import { failureFields } from './db/failures.js';
import { SyncActivity } from './health/sync-activity.js';
import { createHttpServer } from './http/server.js';
import { createLogger, type Logger } from './log.js';
import { Metrics } from './metrics/metrics.js';
import { followAuthChanges } from './orgs/auth-changes.js';
import type { TokenChecks } from './orgs/scim-auth.js';
import { TOKEN_CACHE_TTL_MS, TokenCache } from './orgs/token-cache.js';
import { WebhookDispatcher } from './webhooks/dispatcher.js';
import { SecretBox } from './webhooks/secret-box.js';

export async function serve(
  config: Config = readConfig(),
): Promise<{ server: Server; stop: () => Promise<void> }> {
  const logger = createLogger(config.logLevel);
  const onPostgres = config.databaseUrl !== undefined;
  const admin = resolveAdminToken(config.adminToken, config.dataDir, onPostgres);
  warnAboutSetup(config, logger);
  const database = await openDatabase({
    ...databaseOptions(config),
    onConnectionError: (err) =>
      logger.warn(failureFields(err), 'a database connection failed; it is replaced on next use'),
  });
  const applied = await database.migrate();
  if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');
  const consoleUrl = `${config.publicUrl}/console`;
  if (admin.generatedAt)
    logger.info(
      { path: admin.generatedAt, console: consoleUrl },
      `generated the admin token; it is in this file. Sign in to the console at ${consoleUrl} with it`,
    );
  else if (admin.path) logger.info({ path: admin.path }, 'admin token read from file');

  const tokenChecks: TokenChecks = new TokenCache();
  const listening = followAuthChanges(database, tokenChecks, logger);
  if (onPostgres && !listening) {
    logger.warn(
      `no direct database connection to LISTEN on (DATABASE_DIRECT_URL): admin changes reach other scimd processes within ${TOKEN_CACHE_TTL_MS / 1000} s`,
    );
  }
  await listening?.ready;
  const changes = new ChangeFeed(database.db, {
    logger,
    retentionDays: config.changeRetentionDays,
    schema: database.schema,
    listen: database.listen,
  });
  await changes.start();
  const box = new SecretBox(config.secretKey ?? admin.token);
  const dispatcher = new WebhookDispatcher(database.db, changes, box, {
    ...config.webhooks,
    logger,
    listen: database.listen,
  });
  dispatcher.start();
  const activity = new SyncActivity(database.db, { logger, enabled: config.syncActivity });
  activity.start();
  const app = createApp({
    database,
    publicUrl: config.publicUrl,
    adminToken: admin.token,
    logger,
    tokenChecks,
    changes,
    webhooks: { box, allowPrivate: config.webhooks.allowPrivate, dispatcher },
    activity,
    metrics: new Metrics({ db: database.db, share: database.share, processMetrics: true }),
    idleAfterMs: config.syncIdleMs,
  });
  const server = createHttpServer(app);
  server.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  logger.info(
    { port, host: config.host, database: database.kind, publicUrl: config.publicUrl, console: consoleUrl },
    'scimd is serving',
  );
  // Start-up is told at once, not with the next batch of lines.
  logger.flush();

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      logger.info('stopping: finishing in-flight requests');
      // close() stops accepting and resolves once in-flight requests have finished.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // Long polls answer at once rather than hold the stop for up to their wait.
      await changes.stop();
      await closed;
      await activity.stop();
      await dispatcher.stop();
      await listening?.stop();
      await database.close();
      logger.info('stopped');
    })();
    return stopping;
  };
  return { server, stop };
}

/** Settings that work but are likely a mistake in production. */
function warnAboutSetup(config: Config, logger: Logger): void {
  const production = config.databaseUrl !== undefined || process.env.NODE_ENV === 'production';
  if (production && !config.publicUrlSet) {
    logger.warn(
      { publicUrl: config.publicUrl },
      'PUBLIC_URL is not set: scimBaseUrl and every meta.location name localhost, which an IdP cannot reach',
    );
  }
}

export async function main(): Promise<void> {
  let config: Config;
  try {
    config = readConfig();
  } catch (error) {
    console.error(`scimd: ${(error as Error).message}`);
    process.exit(2);
  }
  // Heard from the start: a signal that comes while scimd starts ends it as soon as it is up.
  let stop: (() => Promise<void>) | undefined;
  let stopping = false;
  const stopAndExit = () => {
    stopping = true;
    if (!stop) return;
    stop().then(
      () => process.exit(0),
      (error) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, stopAndExit);
  // A last net: a promise nobody awaited must not end the process that serves every organization.
  process.on('unhandledRejection', (reason) => console.error('scimd: unhandled rejection', reason));
  try {
    ({ stop } = await serve(config));
    if (stopping) stopAndExit();
  } catch (error) {
    console.error(`scimd: ${(error as Error).message}`);
    process.exit(1);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
