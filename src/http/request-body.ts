// Reading a JSON request body, for the SCIM and the admin API alike; each answers the failures in
// its own error format.
import { bodyParser } from '@koa/bodyparser';
import type { Context } from 'koa';

export const BODY_LIMIT = '1mb';
export const BODY_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH']);

export type BodyFailure = 'tooLarge' | 'invalidJson' | 'unsupportedEncoding' | 'undecodable';

/** Content-Encodings a body may arrive in (RFC 9110 §8.4); anything else is 415. */
const BODY_ENCODINGS: ReadonlySet<string> = new Set(['identity', 'gzip', 'deflate']);

/**
 * Reads a JSON body into ctx.request.body. A body sent without any Content-Type is read as JSON
 * rather than refused. Returns why the body could not be read, if it could not.
 */
export function jsonBodyReader(): (ctx: Context) => Promise<BodyFailure | undefined> {
  const parse = bodyParser({
    enableTypes: ['json'],
    jsonLimit: BODY_LIMIT,
    encoding: 'utf-8',
    detectJSON: (ctx) => !ctx.get('content-type'),
  });
  return async (ctx) => {
    if (!BODY_ENCODINGS.has(ctx.get('content-encoding').trim().toLowerCase() || 'identity'))
      return 'unsupportedEncoding';
    try {
      await parse(ctx, async () => {});
      return undefined;
    } catch (error) {
      // co-body reports a body over the limit as 413 and unparsable JSON as 400; zlib a body that is
      // not the gzip or deflate it claims to be.
      const { status, code } = error as { status?: number; code?: unknown };
      if (status === 413) return 'tooLarge';
      if (status === 415) return 'unsupportedEncoding';
      if (status === 400) return 'invalidJson';
      if (typeof code === 'string' && code.startsWith('Z_')) return 'undecodable';
      throw error;
    }
  };
}
