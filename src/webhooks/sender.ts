// One HTTP POST of a delivery, with a time limit, over kept-alive connections (undici). Unless private
// targets are allowed, the address connected to is checked (publicOnlyLookup), not only the URL.
import type { LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
import { publicOnlyLookup, refusedUrl } from './address.js';

export interface Sent {
  /** The receiver's status, when it answered. */
  readonly status?: number;
  readonly latencyMs: number;
  /** From a 429's or 503's Retry-After, in milliseconds. */
  readonly retryAfterMs?: number;
  /** Why it failed without an answer (timeout, refused connection, refused address). */
  readonly error?: string;
}

export interface SenderOptions {
  /** How long the receiver has to connect and to answer. */
  readonly timeoutMs: number;
  /** Allows http and internal addresses (development and tests). */
  readonly allowPrivate: boolean;
  /** Connections to one receiver at most. */
  readonly connections: number;
  /** How host names are resolved when private targets are not allowed (tests give their own). */
  readonly lookup?: LookupFunction;
}

/** How much of an answer is read: the status is what counts. */
const MAX_ANSWER_BYTES = 64 * 1024;

export class Sender {
  private readonly agent: Agent;

  constructor(private readonly options: SenderOptions) {
    const lookup = options.allowPrivate ? undefined : (options.lookup ?? publicOnlyLookup);
    this.agent = new Agent({
      connections: options.connections,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      connect: { timeout: options.timeoutMs, ...(lookup ? { lookup } : {}) },
    });
  }

  /** `signal` cuts the request off (its endpoint changed): it then fails as `aborted`. */
  async send(
    url: string,
    body: string,
    headers: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<Sent> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const refused = refusedUrl(url, this.options.allowPrivate);
    if (refused) return { latencyMs: 0, error: `the URL ${refused}` };
    try {
      const answer = await request(url, {
        method: 'POST',
        body,
        headers,
        dispatcher: this.agent,
        ...(signal ? { signal } : {}),
      });
      // The status is the answer; a body cut short does not change it.
      await answer.body.dump({ limit: MAX_ANSWER_BYTES }).catch(() => {});
      const retryAfterMs = retryAfter(answer.headers['retry-after']);
      return {
        status: answer.statusCode,
        latencyMs: elapsed(),
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      };
    } catch (err) {
      return { latencyMs: elapsed(), error: failure(err as NodeJS.ErrnoException, this.options.timeoutMs) };
    }
  }

  close(): Promise<void> {
    return this.agent.destroy();
  }
}

const TIMEOUTS = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

/** Why a request got no answer, in words an administrator reads in the delivery log. */
function failure(error: NodeJS.ErrnoException, timeoutMs: number): string {
  if (error.code && TIMEOUTS.has(error.code)) return `no answer within ${timeoutMs} ms`;
  // undici wraps a failed connection; its cause says why (refused, unknown host, internal address).
  const cause = (error.cause as NodeJS.ErrnoException | undefined) ?? error;
  return cause.code ? `${cause.code}: ${cause.message}` : cause.message;
}

/** Retry-After as seconds or an HTTP date, in milliseconds from now. */
function retryAfter(value: string | string[] | undefined): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}
