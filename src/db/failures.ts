// What a database error means for the request that met it. Repositories throw the driver's errors
// as they come; the HTTP surfaces ask here whether an error is the database failing (answered 503
// with Retry-After) rather than a bug (answered 500).

export type DatabaseFailureKind =
  /** The database cannot be reached, or the connection was lost: a restart, a failover, an outage. */
  | 'unavailable'
  /** A statement ran past the time limit (DATABASE_STATEMENT_TIMEOUT_MS). */
  | 'timeout'
  /** No connection was free within DATABASE_POOL_WAIT_MS: this organization's share is in use. */
  | 'busy'
  /** A serialization failure or a deadlock: the same request may well succeed when retried. */
  | 'conflict';

export interface DatabaseFailure {
  readonly kind: DatabaseFailureKind;
  /** How long a client should wait before retrying. */
  readonly retryAfterSeconds: number;
  /** The SQLSTATE or system error code, for the log. */
  readonly code: string | undefined;
  /** What to tell the client, in a sentence. */
  readonly detail: string;
}

/** Raised by the fair share (fair-share.ts) when a connection did not come free in time. */
export class PoolWaitTimeoutError extends Error {
  constructor(waitedMs: number) {
    super(`no database connection came free within ${waitedMs} ms`);
  }
}

const ANSWERS: Record<DatabaseFailureKind, { retryAfterSeconds: number; detail: string }> = {
  unavailable: {
    retryAfterSeconds: 5,
    detail: 'The database is unavailable; retry after Retry-After seconds',
  },
  timeout: {
    retryAfterSeconds: 5,
    detail: 'The request ran past the database time limit; retry after Retry-After seconds',
  },
  busy: {
    retryAfterSeconds: 2,
    detail: 'Every database connection this organization may use is busy; retry after Retry-After seconds',
  },
  conflict: {
    retryAfterSeconds: 1,
    detail: 'The request conflicted with another one running at the same time; retry it',
  },
};

// Node's socket errors: the server is down, unreachable or closed the connection.
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

// SQLSTATEs (PostgreSQL appendix A) that say the server cannot serve now, whatever the statement.
const UNAVAILABLE_STATES = new Set([
  '57P01', // admin_shutdown: pg_terminate_backend, a fast shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up or shutting down
  '53000', // insufficient_resources
  '53100', // disk_full
  '53200', // out_of_memory
  '53300', // too_many_connections
  '53400', // configuration_limit_exceeded
  '25P03', // idle_in_transaction_session_timeout
  '58000', // system_error
  '58030', // io_error
  // A named statement another session made, or that is gone: named statements through a
  // transaction pooler (the README's PgBouncer section).
  '42P05', // duplicate_prepared_statement
  '26000', // invalid_sql_statement_name
]);

const TIMEOUT_STATES = new Set(['57014', '55P03']); // query_canceled (statement_timeout), lock_not_available
const CONFLICT_STATES = new Set(['40001', '40P01']); // serialization_failure, deadlock_detected

// node-postgres reports a lost or refused connection with these messages and no code.
const LOST_CONNECTION =
  /Connection terminated|not queryable|timeout exceeded when trying to connect|connection timeout|after calling end on the pool/i;

export function databaseFailure(error: unknown): DatabaseFailure | undefined {
  const kind = failureKind(error);
  if (!kind) return undefined;
  const code = (error as { code?: unknown }).code;
  return { kind, ...ANSWERS[kind], code: typeof code === 'string' ? code : undefined };
}

function failureKind(error: unknown): DatabaseFailureKind | undefined {
  if (error instanceof PoolWaitTimeoutError) return 'busy';
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code) || code.startsWith('08') || UNAVAILABLE_STATES.has(code))
      return 'unavailable';
    if (TIMEOUT_STATES.has(code)) return 'timeout';
    if (CONFLICT_STATES.has(code)) return 'conflict';
  }
  const message = (error as { message?: unknown }).message;
  if (typeof message === 'string' && LOST_CONNECTION.test(message)) return 'unavailable';
  // A connection that failed several ways at once (happy eyeballs) reports an AggregateError.
  const errors = (error as { errors?: unknown }).errors;
  if (Array.isArray(errors) && errors.length > 0 && errors.every((e) => failureKind(e) === 'unavailable'))
    return 'unavailable';
  return undefined;
}

/** Text the database cannot hold (a NUL, an invalid byte sequence): SQLSTATEs of class 22. */
const UNSTORABLE_TEXT_STATES = new Set(['22021', '22P05']); // character_not_in_repertoire, untranslatable_character

/**
 * True when the statement failed on text the client sent that no column can hold: the client's
 * error (a 400), which every check before the database should have caught.
 */
export function isUnstorableTextError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && UNSTORABLE_TEXT_STATES.has(code);
}

/** True for a statement that ran past the time limit (a search answers that with 400 tooMany). */
export function isStatementTimeout(error: unknown): boolean {
  return failureKind(error) === 'timeout';
}

/**
 * What the process log keeps of a database failure: its kind, code and message. Not the error
 * itself: node-postgres hangs the connection (and its settings) on errors it reports for idle clients.
 */
export function failureFields(error: unknown, failure = databaseFailure(error)) {
  return {
    kind: failure?.kind,
    code: failure?.code,
    message: error instanceof Error ? error.message : String(error),
  };
}
