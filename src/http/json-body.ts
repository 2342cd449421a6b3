// Reads a JSON request body for the admin API, refusing in its error format what cannot be read. A
// request without a body is an empty object, whatever its Content-Type says.
import type { Middleware } from 'koa';
import { AdminError } from './admin-errors.js';
import { BODY_LIMIT, BODY_METHODS, jsonBodyReader } from './request-body.js';

export function readJsonBody(): Middleware {
  const readBody = jsonBodyReader();
  return async (ctx, next) => {
    if (BODY_METHODS.has(ctx.method)) {
      // is() answers null for a request without a body.
      if (ctx.get('content-type') && ctx.is('application/json') === false)
        throw new AdminError(415, 'unsupported_media_type', 'Send application/json');
      const failure = await readBody(ctx);
      if (failure === 'tooLarge') throw new AdminError(413, 'payload_too_large', `Body over ${BODY_LIMIT}`);
      if (failure === 'invalidJson')
        throw new AdminError(400, 'invalid_request', 'The body is not valid JSON');
      if (failure === 'unsupportedEncoding')
        throw new AdminError(415, 'unsupported_media_type', 'Send the body as identity, gzip or deflate');
      if (failure === 'undecodable')
        throw new AdminError(
          400,
          'invalid_request',
          'The body could not be decoded as its Content-Encoding says',
        );
    }
    await next();
  };
}
