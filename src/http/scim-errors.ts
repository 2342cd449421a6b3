// RFC 7644 §3.12: one error class per scimType, plus the plain HTTP errors a SCIM client can see.
// scim-api.ts renders every one into the SCIM error schema.

export const ERROR_SCHEMA_URN = 'urn:ietf:params:scim:api:messages:2.0:Error';

export type ScimType =
  | 'invalidFilter'
  | 'tooMany'
  | 'uniqueness'
  | 'mutability'
  | 'invalidSyntax'
  | 'invalidPath'
  | 'noTarget'
  | 'invalidValue'
  | 'invalidVers'
  | 'sensitive'
  | 'invalidCursor'
  | 'expiredCursor'
  | 'invalidCount';

/**
 * Why a request failed, as sync health tells an IT admin what to do about it (health/hints.ts): a code
 * the error carries, not its wording.
 */
export type FailureReason =
  | 'token_missing'
  | 'token_unknown'
  | 'token_expired'
  | 'token_revoked'
  | 'group_sync_disabled'
  | 'scope_missing'
  | 'unknown_attribute'
  | 'ambiguous_attribute'
  | 'attribute_value'
  | 'members_not_users'
  | 'value_not_catalogued';

export class ScimError extends Error {
  readonly headers: Record<string, string> = {};
  constructor(
    readonly status: number,
    detail: string,
    readonly scimType?: ScimType,
    readonly reason?: FailureReason,
  ) {
    super(detail);
  }

  /**
   * The error as answered. With `requestId`, the detail ends with it: the detail is what an IdP shows
   * its admin, and the id leads the operator to the request's log line.
   */
  toJSON(requestId?: string): Record<string, unknown> {
    return {
      schemas: [ERROR_SCHEMA_URN],
      // RFC 7644 §3.12: status is a string. Okta's checks compare it to "401" and "404".
      status: String(this.status),
      ...(this.scimType ? { scimType: this.scimType } : {}),
      detail: requestId ? `${this.message} (request ${requestId})` : this.message,
    };
  }
}

export class InvalidSyntaxError extends ScimError {
  constructor(detail: string) {
    super(400, detail, 'invalidSyntax');
  }
}
export class InvalidValueError extends ScimError {
  constructor(detail: string, reason?: FailureReason) {
    super(400, detail, 'invalidValue', reason);
  }
}
export class InvalidFilterError extends ScimError {
  constructor(detail: string, reason?: FailureReason) {
    super(400, detail, 'invalidFilter', reason);
  }
}
export class InvalidPathError extends ScimError {
  constructor(detail: string, reason?: FailureReason) {
    super(400, detail, 'invalidPath', reason);
  }
}
export class NoTargetError extends ScimError {
  constructor(detail: string) {
    super(400, detail, 'noTarget');
  }
}
export class MutabilityError extends ScimError {
  constructor(detail: string) {
    super(400, detail, 'mutability');
  }
}
export class UniquenessError extends ScimError {
  constructor(detail: string) {
    super(409, detail, 'uniqueness');
  }
}
export class TooManyError extends ScimError {
  constructor(detail: string) {
    super(400, detail, 'tooMany');
  }
}

export class UnauthorizedError extends ScimError {
  /** `tokenId`: the organization's token that was presented, when it is expired or revoked (sync health). */
  constructor(
    detail: string,
    reason: FailureReason,
    readonly tokenId?: string,
  ) {
    super(401, detail, undefined, reason);
    this.headers['WWW-Authenticate'] = 'Bearer realm="scimd"';
  }
}
export class ForbiddenError extends ScimError {
  constructor(detail: string, reason?: FailureReason) {
    super(403, detail, undefined, reason);
  }
}
export class NotFoundError extends ScimError {
  constructor(detail: string) {
    super(404, detail);
  }
}
export class MethodNotAllowedError extends ScimError {
  constructor(method: string, allowed: readonly string[]) {
    super(405, `${method} is not allowed here; allowed: ${allowed.join(', ')}`);
    this.headers['Allow'] = allowed.join(', ');
  }
}
export class PayloadTooLargeError extends ScimError {
  constructor(limit: string) {
    super(413, `The request body is larger than ${limit}`);
  }
}
export class UnsupportedMediaTypeError extends ScimError {
  constructor(type: string) {
    super(415, `Content-Type ${type} is not supported; send application/scim+json or application/json`);
  }
}
export class UnsupportedEncodingError extends ScimError {
  constructor(encoding: string) {
    super(415, `Content-Encoding ${encoding.slice(0, 100)} is not supported; send identity, gzip or deflate`);
  }
}
/** The database is down, busy or slow: the client should retry (RFC 7231 §7.1.3 Retry-After). */
export class ServiceUnavailableError extends ScimError {
  constructor(detail: string, retryAfterSeconds: number) {
    super(503, detail);
    this.headers['Retry-After'] = String(retryAfterSeconds);
  }
}
export class NotImplementedError extends ScimError {
  constructor(detail: string) {
    super(501, detail);
  }
}

// RFC 9865 §5: cursor paging errors.
export class InvalidCursorError extends ScimError {
  constructor(detail: string) {
    super(400, detail, 'invalidCursor');
  }
}
export class ExpiredCursorError extends ScimError {
  constructor(detail: string) {
    super(400, detail, 'expiredCursor');
  }
}
export class InvalidCountError extends ScimError {
  constructor(detail: string) {
    super(400, detail, 'invalidCount');
  }
}
