// `scimd/server`: scimd inside an existing Node app. createScimd runs what `scimd serve` runs (the
// migrations, feed numbering, webhook delivery, sync counts) and answers under PUBLIC_URL's path.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Middleware } from 'koa';
import { readConfig } from './config.js';
import { basePathOf, pathWithinBase } from './http/base-path.js';
import { createLogger, type Logger } from './log.js';
import { start } from './start.js';

export interface ScimdOptions {
  /** A Postgres connection string; without one, embedded PGlite in `dataDir`. */
  readonly database?: string;
  /** The admin API's bearer token, at least 32 characters (on PGlite, generated in `dataDir` when absent). */
  readonly adminToken?: string;
  /**
   * Where clients reach scimd, with the path it is mounted at: `https://app.example.com/identity`.
   * SCIM base URLs, `meta.location`, setup links and the console's links are built from it.
   */
  readonly publicUrl: string;
  /** PGlite's data and a generated admin token (`./data` unless given). */
  readonly dataDir?: string;
  /** A pino logger; otherwise JSON lines on standard output at `logLevel` (`info`). */
  readonly logger?: Logger;
  readonly logLevel?: string;
  /** Any other setting, named as its environment variable in docs/configuration.md. */
  readonly settings?: Readonly<Record<string, string>>;
}

/** A node:http request listener; under Express it takes `next` and calls it for other paths. */
export type ScimdHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  next?: (error?: unknown) => void,
) => void;

export interface Scimd {
  /** For `http.createServer(handler)`, Express's `app.use(handler)` and Fastify's raw request. */
  readonly handler: ScimdHandler;
  /** Koa middleware: answers scimd's paths, passes every other request on. */
  readonly koa: Middleware;
  /** The path scimd answers under ('' at the root). */
  readonly basePath: string;
  /** Ends the background work and closes the database (the app's own server stays the app's). */
  close(): Promise<void>;
}

export async function createScimd(options: ScimdOptions): Promise<Scimd> {
  const config = readConfig({
    ...options.settings,
    ...defined({
      DATABASE_URL: options.database,
      SCIMD_ADMIN_TOKEN: options.adminToken,
      PUBLIC_URL: options.publicUrl,
      DATA_DIR: options.dataDir,
      LOG_LEVEL: options.logLevel,
    }),
  });
  const logger = options.logger ?? createLogger(config.logLevel);
  const scimd = await start(config, logger);
  const basePath = basePathOf(config.publicUrl);
  const callback = scimd.app.callback();
  // Express keeps the mounted request's whole path in originalUrl; node:http and Fastify in url.
  const pathOf = (req: IncomingMessage) => (req as { originalUrl?: string }).originalUrl ?? req.url ?? '/';

  const handler: ScimdHandler = (req, res, next) => {
    const path = pathWithinBase(pathOf(req), basePath);
    if (path === undefined) {
      if (next) return next();
      res.statusCode = 404;
      res.end();
      return;
    }
    req.url = path;
    void callback(req, res);
  };
  const koa: Middleware = async (ctx, next) => {
    const path = pathWithinBase(ctx.originalUrl, basePath);
    if (path === undefined) return next();
    ctx.respond = false;
    ctx.req.url = path;
    await callback(ctx.req, ctx.res);
  };
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= scimd.endLongPolls().then(() => scimd.stop());
    return closing;
  };
  return { handler, koa, basePath, close };
}

function defined(values: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).filter((e): e is [string, string] => e[1] !== undefined));
}
