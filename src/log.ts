import { type Logger, pino } from 'pino';

export type { Logger };

// Credentials never reach a log line: the Authorization header and any token field are censored.
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'headers.authorization',
  'authorization',
  'token',
  '*.token',
  'secret',
  '*.secret',
];

/**
 * Standard output, written once per turn of the event loop: the lines logged while one batch of
 * events is handled (under load, the request lines of several requests) go out in one write, in the
 * order they were logged, before the next turn. pino's default writes each line at once, one system
 * call per request line: about 9 µs of the server's CPU per request in the bench's lookup (A/B
 * rounds). Lines still pending when the process exits (including on an uncaught exception) are
 * written synchronously on the way out; only a process killed outright can lose the current turn's.
 */
export class TurnBufferedOutput {
  #pending: string[] = [];

  /** `output` writes synchronously: pino's own destination (sonic-boom) for a file descriptor. */
  constructor(private readonly output: { write(text: string): unknown }) {}

  write(line: string): void {
    if (this.#pending.push(line) === 1) setImmediate(() => this.flush());
  }

  /** Writes what is pending now (also called at exit). */
  flush(): void {
    if (this.#pending.length === 0) return;
    const lines = this.#pending;
    this.#pending = [];
    this.output.write(lines.join(''));
  }
}

let stdout: TurnBufferedOutput | undefined;

/** The process's standard output for logs: one per process, flushed when the process exits. */
function standardOutput(): TurnBufferedOutput {
  if (!stdout) {
    // sonic-boom, as pino's default: it retries a full pipe and stops writing to a broken one.
    const output = new TurnBufferedOutput(pino.destination({ dest: 1, sync: true }));
    process.on('exit', () => output.flush());
    stdout = output;
  }
  return stdout;
}

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } },
    destination ?? standardOutput(),
  );
}

/** The fields of the line each request logs (src/http/request-context.ts). */
export interface RequestLine {
  readonly requestId: string;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  /** Finite: the time the request took, in milliseconds. */
  readonly ms: number;
}

/**
 * Writes the line each request logs exactly as `logger.info(fields, 'request')` would (the same
 * level, time, bindings and keys, in the same order) to the logger's own destination. pino formats a
 * logged object key by key, asking of each whether a serializer, a redaction or an escape applies;
 * under the bench's lookup load that cost the server 11-26 µs a request (A/B rounds), for a line whose
 * keys are fixed and whose values hold no credential. Every other line goes through pino itself.
 */
export function requestLineWriter(logger: Logger): (line: RequestLine) => void {
  const internals = logger as unknown as Record<symbol, unknown>;
  const destination = internals[pino.symbols.streamSym] as { write(text: string): unknown };
  // pid, hostname and any child bindings, already serialized by pino: `,"pid":1,"hostname":"h"`.
  const bindings = internals[pino.symbols.chindingsSym] as string;
  const level = logger.levels.values.info;
  return (line) => {
    if (!logger.isLevelEnabled('info')) return;
    destination.write(
      `{"level":${level},"time":${Date.now()}${bindings},"requestId":${JSON.stringify(line.requestId)},` +
        `"method":${JSON.stringify(line.method)},"path":${JSON.stringify(line.path)},` +
        `"status":${line.status},"ms":${line.ms},"msg":"request"}\n`,
    );
  };
}
