import { resolve } from 'node:path';

export interface Config {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  dataDir: string;
  /** Origin used in meta.location and scimBaseUrl, without a trailing slash. */
  publicUrl: string;
  adminToken: string | undefined;
  logLevel: string;
}

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = env.PORT ? Number.parseInt(env.PORT, 10) : 8080;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`PORT must be a port number, got ${env.PORT}`);
  const publicUrl = (env.PUBLIC_URL || `http://localhost:${port}`).replace(/\/+$/, '');
  try {
    new URL(publicUrl);
  } catch {
    throw new Error(`PUBLIC_URL must be an absolute URL, got ${publicUrl}`);
  }
  return {
    port,
    host: env.HOST || '0.0.0.0',
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: resolve(env.DATA_DIR || './data'),
    publicUrl,
    adminToken: env.SCIMD_ADMIN_TOKEN || undefined,
    logLevel: env.LOG_LEVEL || 'info',
  };
}
