// What the feed client throws: answers that retrying cannot change, by kind, so that a product can
// catch the one it handles (CursorExpired: resynchronise) and let the others stop it.

/** The feed answered an error that is not retried (the admin API's `{error: {code, message}}`). */
export class FeedError extends Error {
  override readonly name: string = 'FeedError';

  constructor(
    readonly status: number,
    /** The admin API's error code (`invalid_request`, …), when the answer had one. */
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

/**
 * 410: the changes after `cursor` were removed by retention. Resynchronise from the read model, then
 * follow from a cursor taken before the resynchronisation.
 */
export class CursorExpired extends FeedError {
  override readonly name = 'CursorExpired';

  constructor(
    readonly cursor: string,
    message: string,
  ) {
    super(410, 'cursor_expired', message);
  }
}

/** 401 or 403: the API key is wrong, revoked, or may not read the feed. */
export class AccessDenied extends FeedError {
  override readonly name = 'AccessDenied';
}
