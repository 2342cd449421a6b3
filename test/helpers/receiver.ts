// A real HTTP receiver on loopback for webhook tests: it keeps every request as received (raw body,
// headers, when it began and ended) and answers as the test says.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

interface Received {
  readonly rawBody: string;
  readonly headers: IncomingHttpHeaders;
  readonly startedAt: number;
  endedAt: number;
  // biome-ignore lint/suspicious/noExplicitAny: the JSON of a delivery
  readonly body: any;
}

interface Answer {
  readonly status: number;
  readonly delayMs?: number;
  /** Answers once this settles (after delayMs, if both are given). */
  readonly until?: Promise<unknown>;
  readonly headers?: Record<string, string>;
}

export interface Receiver {
  readonly url: string;
  /** Requests answered, in the order they were answered. */
  readonly received: Received[];
  /** Requests whose body has arrived, in the order they arrived, answered or not. */
  readonly arrived: Received[];
  /** How each request is answered (200 at once unless set). */
  answer: (request: Received) => Answer;
  /** The most requests it had in flight at once. */
  maxInFlight(): number;
  /** Resolves once `predicate` holds for what was received, or rejects after `timeoutMs`. */
  waitFor(predicate: (received: Received[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const arrived: Received[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const receiver: Receiver = {
    url: '',
    received,
    arrived,
    answer: () => ({ status: 200 }),
    maxInFlight: () => maxInFlight,
    async waitFor(predicate, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(received)) {
        if (Date.now() > deadline)
          throw new Error(
            `the receiver did not get what was expected in ${timeoutMs} ms (${received.length} received)`,
          );
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(rawBody);
      } catch {
        body = undefined;
      }
      const request: Received = { rawBody, headers: req.headers, startedAt: Date.now(), endedAt: 0, body };
      arrived.push(request);
      const answer = receiver.answer(request);
      setTimeout(async () => {
        await answer.until;
        request.endedAt = Date.now();
        received.push(request);
        inFlight--;
        res.writeHead(answer.status, answer.headers ?? {});
        res.end();
      }, answer.delayMs ?? 0);
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  (receiver as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}
