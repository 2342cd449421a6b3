// The HTTP server around the app: time limits for slow clients, and an answer in the API's own
// error format for requests Node refuses before the app sees them (a URL or headers over Node's
// 16 KB limit, a request that arrives too slowly, a malformed request).
import { createServer, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type Koa from 'koa';
import { ERROR_SCHEMA_URN } from './scim-errors.js';

/** A client must send a request's headers within this time, and the whole request within the next. */
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;
/**
 * Idle connections are kept longer than a load balancer keeps them (60 s is common): otherwise the
 * server closes a socket the balancer is about to reuse, and the client sees a reset or a 502.
 */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

export interface ServerTimeouts {
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
}

export function createHttpServer(
  app: Koa,
  timeouts: ServerTimeouts = { headersTimeoutMs: HEADERS_TIMEOUT_MS, requestTimeoutMs: REQUEST_TIMEOUT_MS },
): Server {
  const server = createServer(
    {
      headersTimeout: timeouts.headersTimeoutMs,
      requestTimeout: timeouts.requestTimeoutMs,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      // How often Node looks for requests past their time limit (its default is 30 s).
      connectionsCheckingInterval: 1_000,
    },
    app.callback(),
  );
  server.on('clientError', (error, socket) => answerClientError(error, socket, timeouts));
  return server;
}

const REQUEST_LINE = /^([A-Z]+) (\S*)/;

interface Refusal {
  readonly status: number;
  readonly reason: string;
  readonly code: string;
  readonly detail: string;
}

function refusal(error: NodeJS.ErrnoException, urlTooLong: boolean, timeouts: ServerTimeouts): Refusal {
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    if (urlTooLong)
      return {
        status: 414,
        reason: 'URI Too Long',
        code: 'uri_too_long',
        detail:
          'The request URL is longer than 16 KB. Send a long filter in the body of a POST to /Users/.search or /Groups/.search instead (RFC 7644 §3.4.3)',
      };
    return {
      status: 431,
      reason: 'Request Header Fields Too Large',
      code: 'headers_too_large',
      detail:
        'The request line and headers are larger than 16 KB. A long filter belongs in the body of a POST to /Users/.search or /Groups/.search (RFC 7644 §3.4.3)',
    };
  }
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' || error.code === 'ERR_HTTP_HEADERS_TIMEOUT')
    return {
      status: 408,
      reason: 'Request Timeout',
      code: 'request_timeout',
      detail: `The request did not arrive in time: headers within ${timeouts.headersTimeoutMs / 1000} s, the whole request within ${timeouts.requestTimeoutMs / 1000} s`,
    };
  return { status: 400, reason: 'Bad Request', code: 'bad_request', detail: 'The request is not valid HTTP' };
}

/** Node's 'clientError': answered in the error format of the API the request was for. */
function answerClientError(
  error: NodeJS.ErrnoException & { rawPacket?: Buffer },
  socket: Duplex,
  timeouts: ServerTimeouts,
): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  // The start of the request as read, when it is one: its path says which API it was for, and a
  // request line that does not end within it is a URL over the limit.
  const start = error.rawPacket?.subarray(0, 8192).toString('latin1') ?? '';
  const requestLine = REQUEST_LINE.exec(start);
  const urlTooLong = requestLine !== null && !start.includes('\r\n');
  const { status, reason, code, detail } = refusal(error, urlTooLong, timeouts);
  const admin = requestLine?.[2]?.startsWith('/admin/') ?? false;
  const body = JSON.stringify(
    admin
      ? { error: { code, message: detail } }
      : { schemas: [ERROR_SCHEMA_URN], status: String(status), detail },
  );
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\n` +
      `Content-Type: ${admin ? 'application/json' : 'application/scim+json'}; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}
