// One HTTP POST of a delivery, with a time limit, over kept-alive connections. Unless private targets
// are allowed, the address connected to is checked (publicOnlyLookup), not only the URL.
import http from 'node:http';
import https from 'node:https';
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

/** How much of an answer is read: the status is what counts. */
const MAX_ANSWER_BYTES = 64 * 1024;

export class Sender {
  private readonly agents: { http: http.Agent; https: https.Agent };

  constructor(private readonly options: { timeoutMs: number; allowPrivate: boolean; maxSockets: number }) {
    const lookup = options.allowPrivate ? undefined : publicOnlyLookup;
    const common = { keepAlive: true, maxSockets: options.maxSockets, ...(lookup ? { lookup } : {}) };
    this.agents = { http: new http.Agent(common), https: new https.Agent(common) };
  }

  send(url: string, body: string, headers: Record<string, string>): Promise<Sent> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const refused = refusedUrl(url, this.options.allowPrivate);
    if (refused) return Promise.resolve({ latencyMs: 0, error: `the URL ${refused}` });
    const target = new URL(url);
    const client = target.protocol === 'https:' ? https : http;
    return new Promise((resolve) => {
      let settled = false;
      const done = (sent: Sent) => {
        if (settled) return;
        settled = true;
        resolve(sent);
      };
      const req = client.request(
        target,
        {
          method: 'POST',
          agent: target.protocol === 'https:' ? this.agents.https : this.agents.http,
          headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
          timeout: this.options.timeoutMs,
        },
        (res) => {
          let read = 0;
          res.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (read > MAX_ANSWER_BYTES) res.destroy();
          });
          const finish = () => {
            const status = res.statusCode ?? 0;
            const retryAfterMs = retryAfter(res.headers['retry-after']);
            done({ status, latencyMs: elapsed(), ...(retryAfterMs === undefined ? {} : { retryAfterMs }) });
          };
          res.on('end', finish);
          res.on('close', finish);
          res.on('error', finish);
        },
      );
      req.on('timeout', () => {
        req.destroy();
        done({ latencyMs: elapsed(), error: `no answer within ${this.options.timeoutMs} ms` });
      });
      req.on('error', (error: NodeJS.ErrnoException) =>
        done({ latencyMs: elapsed(), error: error.code ? `${error.code}: ${error.message}` : error.message }),
      );
      req.end(body);
    });
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}

/** Retry-After as seconds or an HTTP date, in milliseconds from now. */
function retryAfter(value: string | undefined): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}
