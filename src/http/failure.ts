// What a failed request is answered with, decided in one place for every surface (SCIM, admin API,
// console): its status, the sentence that tells the client why, the headers (Retry-After, Allow),
// and what the process log keeps of it. Each surface renders the answer in its own format.
import { databaseFailure, failureFields, isUnstorableTextError } from '../db/failures.js';
import { UNSTORABLE_TEXT_MESSAGE } from '../db/text.js';
import type { Logger } from '../log.js';
import { AdminError, type AdminErrorCode } from './admin-errors.js';
import { ScimError, type ScimType } from './scim-errors.js';

export interface Failure {
  readonly status: number;
  /** The sentence the client is told; never a secret, never the error's own text for a bug. */
  readonly message: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The SCIM error, when one was raised (it carries its scimType and reason). */
  readonly scim?: ScimError;
  /** The admin API's code, when one was raised. */
  readonly code?: AdminErrorCode;
}

export interface FailureContext {
  readonly logger: Logger;
  readonly metrics: { databaseFailure(kind: string): void };
  readonly requestId: string;
  /** Which surface, for the log line. */
  readonly surface: 'SCIM' | 'admin' | 'console';
}

/** The foreign keys from what a write creates to its organization: a write raced its organization's deletion. */
const ORG_KEYS: ReadonlySet<string> = new Set([
  'users_org_id_fkey',
  'groups_org_id_fkey',
  'org_counts_org_id_fkey',
]);

/** Statuses a body parser or Koa raises for a request it cannot read. */
const UNREADABLE: Readonly<Record<number, string>> = {
  400: 'The request body could not be read',
  413: 'The request body is too large',
  415: 'The request body’s type or encoding is not supported',
};

/** The status a failure is answered with, without logging it: for what records the outcome (an audit entry). */
export function statusOf(error: unknown): number {
  if (error instanceof ScimError || error instanceof AdminError) return error.status;
  if (isUnstorableTextError(error)) return 400;
  if (ORG_KEYS.has((error as { constraint?: unknown } | null)?.constraint as string)) return 404;
  if (databaseFailure(error)) return 503;
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' && UNREADABLE[status] ? status : 500;
}

export function classifyFailure(error: unknown, context: FailureContext): Failure {
  if (error instanceof ScimError)
    return { status: error.status, message: error.message, headers: error.headers, scim: error };
  if (error instanceof AdminError)
    return { status: error.status, message: error.message, headers: error.headers, code: error.code };
  if (isUnstorableTextError(error))
    return { status: 400, message: `A value ${UNSTORABLE_TEXT_MESSAGE}`, headers: {} };
  if (ORG_KEYS.has((error as { constraint?: unknown } | null)?.constraint as string))
    return { status: 404, message: 'This organization no longer exists', headers: {} };
  const failure = databaseFailure(error);
  if (failure) {
    context.metrics.databaseFailure(failure.kind);
    context.logger.warn(
      { ...failureFields(error, failure), requestId: context.requestId },
      `database failure in ${context.surface} request`,
    );
    return {
      status: 503,
      message: failure.detail,
      headers: { 'Retry-After': String(failure.retryAfterSeconds) },
    };
  }
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status === 'number' && UNREADABLE[status])
    return { status, message: UNREADABLE[status]!, headers: {} };
  context.logger.error(
    { err: error, requestId: context.requestId },
    `unhandled error in ${context.surface} request`,
  );
  const message =
    context.surface === 'SCIM'
      ? 'The service provider failed to process the request'
      : 'The request failed unexpectedly';
  return { status: 500, message, headers: {} };
}

/** The admin API's code for a status, when the failure raised none. */
export function adminCodeOf(failure: Failure): AdminErrorCode {
  if (failure.code) return failure.code;
  const codes: Record<number, AdminErrorCode> = {
    400: 'invalid_request',
    401: 'unauthorized',
    403: 'forbidden',
    404: 'not_found',
    405: 'method_not_allowed',
    409: 'conflict',
    413: 'payload_too_large',
    415: 'unsupported_media_type',
    503: 'unavailable',
  };
  return codes[failure.status] ?? 'internal';
}

/** The SCIM error of a failure (RFC 7644 §3.12), a 400 raised by no SCIM code being an invalid value. */
export function scimErrorOf(failure: Failure): ScimError {
  if (failure.scim) return failure.scim;
  const scimType: ScimType | undefined = failure.status === 400 ? 'invalidValue' : undefined;
  const error = new ScimError(failure.status, failure.message, scimType);
  Object.assign(error.headers, failure.headers);
  return error;
}
