// What `scimd serve` and createScimd share: open the database, migrate, start the background work
// (feed numbering, webhook delivery, sync counts) and build the app; stop() ends them in order.
import type Koa from 'koa';
import { resolveAdminToken } from './admin-token.js';
import { createApp } from './app.js';
import { ChangeFeed } from './changes/change-feed.js';
import { type Config, databaseOptions } from './config.js';
import { loadBrand } from './console/brand.js';
import { autovacuumOff, autovacuumWarning } from './db/autovacuum.js';
import { openDatabase } from './db/database.js';
import { failureFields } from './db/failures.js';
import { SyncActivity } from './health/sync-activity.js';
import type { Logger } from './log.js';
import { Metrics } from './metrics/metrics.js';
import { followAuthChanges } from './orgs/auth-changes.js';
import type { TokenChecks } from './orgs/scim-auth.js';
import { TOKEN_CACHE_TTL_MS, TokenCache } from './orgs/token-cache.js';
import { WebhookDispatcher } from './webhooks/dispatcher.js';
import { SecretBox } from './webhooks/secret-box.js';

export interface Started {
  readonly app: Koa;
  readonly databaseKind: 'postgres' | 'pglite';
  readonly consoleUrl: string;
  /** Answers long polls at once: call it when the server stops accepting, before stop(). */
  readonly endLongPolls: () => Promise<void>;
  /** Ends the background work and closes the database. */
  readonly stop: () => Promise<void>;
}

export async function start(config: Config, logger: Logger): Promise<Started> {
  const onPostgres = config.databaseUrl !== undefined;
  const admin = resolveAdminToken(config.adminToken, config.dataDir, onPostgres);
  const brand = loadBrand(config.consoleBrand);
  warnAboutSetup(config, logger);
  const database = await openDatabase({
    ...databaseOptions(config),
    onConnectionError: (err) =>
      logger.warn(failureFields(err), 'a database connection failed; it is replaced on next use'),
  });
  const applied = await database.migrate();
  if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');
  // PGlite serves one process and has no autovacuum to turn on.
  const vacuumWarning = onPostgres ? autovacuumWarning(await autovacuumOff(database.db)) : undefined;
  if (vacuumWarning) logger.warn(vacuumWarning);
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
    brand,
  });
  let endingPolls: Promise<void> | undefined;
  const endLongPolls = () => {
    endingPolls ??= changes.stop();
    return endingPolls;
  };
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      await endLongPolls();
      await activity.stop();
      await dispatcher.stop();
      await listening?.stop();
      await database.close();
    })();
    return stopping;
  };
  return { app, databaseKind: database.kind, consoleUrl, endLongPolls, stop };
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
