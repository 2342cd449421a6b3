// config → start (database, migrations, background work, app) → listen; SIGTERM/SIGINT stop gracefully.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Config, readConfig } from './config.js';
import { createHttpServer } from './http/server.js';
import { createLogger } from './log.js';
import { writeServingAddress } from './serving-address.js';
import { start } from './start.js';

export async function serve(
  config: Config = readConfig(),
): Promise<{ server: Server; stop: () => Promise<void> }> {
  const logger = createLogger(config.logLevel);
  const scimd = await start(config, logger);
  const server = createHttpServer(scimd.app);
  server.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  logger.info(
    {
      port,
      host: config.host,
      database: scimd.databaseKind,
      publicUrl: config.publicUrl,
      console: scimd.consoleUrl,
    },
    'scimd is serving',
  );
  const forgetAddress =
    scimd.databaseKind === 'pglite'
      ? writeServingAddress(config.dataDir, `http://localhost:${port}`)
      : undefined;
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
      await scimd.endLongPolls();
      await closed;
      await scimd.stop();
      forgetAddress?.();
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
