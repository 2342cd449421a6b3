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

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, destination);
}
