// The command line's client of the admin API at SCIMD_URL, authenticated with SCIMD_ADMIN_TOKEN or the
// admin-token file the server wrote in DATA_DIR, and the failures a command exits with.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ADMIN_TOKEN_FILE } from '../admin-token.js';
import { dataDirectory } from '../config.js';
import { readServingAddress } from '../serving-address.js';

/** The command was called wrongly: exit 2. */
export class UsageError extends Error {}
/** The server refused or failed: exit 1. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}
/** The server could not be reached: exit 3. */
export class UnreachableError extends Error {}

export interface Api {
  /** `signal` abandons the request (a long poll the user interrupted). */
  call(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<unknown>;
}

/** SCIMD_URL; else PORT on this machine; else where a scimd on DATA_DIR said it serves; else port 8080. */
function serverUrl(env: NodeJS.ProcessEnv): string {
  const url =
    env.SCIMD_URL ||
    (env.PORT ? `http://localhost:${env.PORT}` : undefined) ||
    readServingAddress(dataDirectory(env)) ||
    'http://localhost:8080';
  return url.replace(/\/+$/, '');
}

export function adminClient(env: NodeJS.ProcessEnv): Api {
  const base = serverUrl(env);
  const token = () => {
    if (env.SCIMD_ADMIN_TOKEN) return env.SCIMD_ADMIN_TOKEN;
    const file = join(dataDirectory(env), ADMIN_TOKEN_FILE);
    try {
      return readFileSync(file, 'utf8').trim();
    } catch {
      throw new UsageError(`No admin token: set SCIMD_ADMIN_TOKEN, or run where ${file} exists`);
    }
  };
  return {
    async call(method, path, body, signal) {
      let res: Response;
      try {
        res = await fetch(`${base}/admin/v1${path}`, {
          method,
          headers: {
            Authorization: `Bearer ${token()}`,
            ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
          },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
          ...(signal ? { signal } : {}),
        });
      } catch (error) {
        if (error instanceof UsageError || signal?.aborted) throw error;
        throw new UnreachableError(
          `Cannot reach scimd at ${base} (set SCIMD_URL): ${(error as Error).message}`,
        );
      }
      const text = await res.text();
      const parsed = text ? (JSON.parse(text) as unknown) : undefined;
      if (!res.ok) {
        const message =
          (parsed as { error?: { message?: string } } | undefined)?.error?.message ?? res.statusText;
        throw new ApiError(res.status, `${res.status}: ${message}`);
      }
      return parsed;
    },
  };
}
