// Admin API errors: `{error: {code, message}}`. Messages never carry a secret.
export type AdminErrorCode =
  | 'unauthorized'
  | 'forbidden'
  | 'cursor_expired'
  | 'not_found'
  | 'invalid_request'
  | 'conflict'
  | 'method_not_allowed'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'unavailable'
  | 'internal';

export class AdminError extends Error {
  constructor(
    readonly status: number,
    readonly code: AdminErrorCode,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }

  /** With the request's id, which the log line of the request carries too. */
  toJSON(requestId?: string) {
    return { error: { code: this.code, message: this.message, ...(requestId ? { requestId } : {}) } };
  }
}

export const invalidRequest = (message: string) => new AdminError(400, 'invalid_request', message);
export const notFound = (message: string) => new AdminError(404, 'not_found', message);
