import { resolve } from 'node:path';
import { DEFAULT_RETENTION_DAYS } from './changes/change-feed.js';
import type { BrandSettings } from './console/brand.js';
import {
  type DatabaseOptions,
  DEFAULT_POOL_SIZE,
  DEFAULT_POOL_WAIT_MS,
  DEFAULT_STATEMENT_TIMEOUT_MS,
} from './db/database.js';

export interface Config {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  /** A direct connection for LISTEN and migrations when DATABASE_URL goes through a transaction pooler. */
  databaseDirectUrl: string | undefined;
  /** false: unnamed statements and no connection settings, for PgBouncer in transaction mode. */
  preparedStatements: boolean;
  poolSize: number;
  /** Connections one organization may hold at once (undefined: three quarters of the pool). */
  poolPerOrg: number | undefined;
  poolWaitMs: number;
  statementTimeoutMs: number;
  dataDir: string;
  /** Origin used in meta.location and scimBaseUrl, without a trailing slash. */
  publicUrl: string;
  /** Whether PUBLIC_URL was set, rather than defaulted to localhost. */
  publicUrlSet: boolean;
  adminToken: string | undefined;
  logLevel: string;
  /** How many days the change feed keeps changes. */
  changeRetentionDays: number;
  /** Seals webhook signing secrets; the admin token when unset. */
  secretKey: string | undefined;
  /** Whether requests are counted for sync health (false: health shows tokens and people only). */
  syncActivity: boolean;
  /** No request for this long: an organization's sync health is idle. */
  syncIdleMs: number;
  /** The console's white label: what customers' setup pages are signed with (read by console/brand.ts). */
  consoleBrand: BrandSettings;
  webhooks: {
    allowPrivate: boolean;
    timeoutMs: number;
    concurrency: number;
    retryDelaysMs: number[];
  };
}

const DEFAULT_RETRY_DELAYS = '10s,1m,5m,30m,2h,6h,12h,24h';
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `10s,1m,5m`: each wait before a retry, in ms, s, m or h. */
function durations(env: NodeJS.ProcessEnv, name: string, fallback: string): number[] {
  const raw = env[name]?.trim() || fallback;
  const values = raw.split(',').map((part) => {
    const match = /^(\d+)(ms|s|m|h)$/.exec(part.trim());
    if (!match) throw new Error(`${name} must list durations like 10s,1m,5m,2h, got ${raw}`);
    return Number(match[1]) * UNIT_MS[match[2]!]!;
  });
  if (values.length > 50) throw new Error(`${name} lists at most 50 retries`);
  return values;
}

/** A whole number within bounds, or the default when the variable is unset. */
function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max)
    throw new Error(`${name} must be a whole number from ${min} to ${max}, got ${raw}`);
  return value;
}

function boolean(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new Error(`${name} must be true or false, got ${env[name]}`);
}

/** A short line of text without control characters, or undefined when the variable is unset. */
function label(env: NodeJS.ProcessEnv, name: string, max: number): string | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses.
  if (raw.length > max || /[\u0000-\u001f\u007f]/.test(raw))
    throw new Error(`${name} must be at most ${max} characters on one line, got ${raw}`);
  return raw;
}

/** A CSS colour as #rgb or #rrggbb, or undefined when the variable is unset. */
function hexColor(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  if (!/^#([0-9a-f]{3}|[0-9a-f]{6})$/i.test(raw))
    throw new Error(`${name} must be a colour written #rrggbb or #rgb, such as #0b57d0, got ${raw}`);
  return raw;
}

/** Where the embedded database and the generated admin token live: DATA_DIR, by default ./data. */
export function dataDirectory(env: NodeJS.ProcessEnv): string {
  return resolve(env.DATA_DIR || './data');
}

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const publicUrl = (env.PUBLIC_URL || `http://localhost:${port}`).replace(/\/+$/, '');
  try {
    new URL(publicUrl);
  } catch {
    throw new Error(`PUBLIC_URL must be an absolute URL, got ${publicUrl}`);
  }
  const poolSize = integer(env, 'DATABASE_POOL_SIZE', DEFAULT_POOL_SIZE, 1, 1000);
  return {
    port,
    host: env.HOST || '0.0.0.0',
    databaseUrl: env.DATABASE_URL || undefined,
    databaseDirectUrl: env.DATABASE_DIRECT_URL || undefined,
    preparedStatements: boolean(env, 'DATABASE_PREPARED_STATEMENTS', true),
    poolSize,
    poolPerOrg: env.DATABASE_POOL_PER_ORG
      ? integer(env, 'DATABASE_POOL_PER_ORG', poolSize, 1, poolSize)
      : undefined,
    poolWaitMs: integer(env, 'DATABASE_POOL_WAIT_MS', DEFAULT_POOL_WAIT_MS, 1, 600_000),
    statementTimeoutMs: integer(
      env,
      'DATABASE_STATEMENT_TIMEOUT_MS',
      DEFAULT_STATEMENT_TIMEOUT_MS,
      0,
      3_600_000,
    ),
    dataDir: dataDirectory(env),
    publicUrl,
    publicUrlSet: Boolean(env.PUBLIC_URL),
    adminToken: env.SCIMD_ADMIN_TOKEN || undefined,
    logLevel: env.LOG_LEVEL || 'info',
    changeRetentionDays: integer(env, 'CHANGE_RETENTION_DAYS', DEFAULT_RETENTION_DAYS, 1, 3650),
    secretKey: env.SCIMD_SECRET_KEY || undefined,
    syncActivity: boolean(env, 'SYNC_ACTIVITY', true),
    syncIdleMs: integer(env, 'SYNC_IDLE_HOURS', 24, 1, 24 * 365) * 3_600_000,
    consoleBrand: {
      name: label(env, 'CONSOLE_BRAND_NAME', 60),
      color: hexColor(env, 'CONSOLE_BRAND_COLOR'),
      logoPath: env.CONSOLE_BRAND_LOGO?.trim() ? resolve(env.CONSOLE_BRAND_LOGO.trim()) : undefined,
    },
    webhooks: {
      allowPrivate: boolean(env, 'WEBHOOKS_ALLOW_PRIVATE', false),
      timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
      concurrency: integer(env, 'WEBHOOK_CONCURRENCY', 16, 1, 256),
      retryDelaysMs: durations(env, 'WEBHOOK_RETRY_DELAYS', DEFAULT_RETRY_DELAYS),
    },
  };
}

/** How the configured database is opened (by the server and by `scimd migrate`). */
export function databaseOptions(config: Config): DatabaseOptions {
  return {
    databaseUrl: config.databaseUrl,
    directUrl: config.databaseDirectUrl,
    pgliteDir: config.dataDir,
    prepare: config.preparedStatements,
    poolSize: config.poolSize,
    poolPerOrg: config.poolPerOrg,
    poolWaitMs: config.poolWaitMs,
    statementTimeoutMs: config.statementTimeoutMs,
  };
}
