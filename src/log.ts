import { type Logger, pino } from 'pino';

export type { Logger };

// Credentials never reach a log line: the Authorization header and any token field are censored.
const REDACTED_PATHS = [
  'req.headers.authorization',
  'headers.authorization',
  'authorization',
  'token',
  '*.token',
  'secret',
  '*.secret',
];

/** Lines written at most this long after they are logged (a second: fine for an operator's tail). */
const FLUSH_INTERVAL_MS = 1_000;

/**
 * JSON lines on standard output through pino's own asynchronous destination. Lines are buffered up
 * to 4 KB and written together (a system call per line costs a busy server more than the line), and
 * what is buffered is written within FLUSH_INTERVAL_MS; pino writes what is pending when the process
 * exits (also on an uncaught exception).
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } },
    destination ?? standardOutput(),
  );
}

function standardOutput(): pino.DestinationStream {
  const output = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  setInterval(() => output.flush(), FLUSH_INTERVAL_MS).unref();
  return output;
}

/**
 * The logger of the line each request logs: the same output, without redaction. Its fields are
 * fixed and none can hold a credential, and redaction is most of pino's cost for the busiest line.
 */
export function requestLogger(logger: Logger): Logger {
  return logger.child({}, { redact: [] });
}
