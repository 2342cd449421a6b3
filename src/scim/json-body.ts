// The body of a POST, PUT or PATCH, read for a route that exists (an unknown path is a 404 whatever
// its body): its content type, its encoding, then the JSON.
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { BODY_LIMIT, BODY_METHODS, jsonBodyReader } from '../http/request-body.js';
import { checkRoute } from '../http/route-check.js';
import {
  InvalidSyntaxError,
  PayloadTooLargeError,
  UnsupportedEncodingError,
  UnsupportedMediaTypeError,
} from '../http/scim-errors.js';
import type { ScimState } from '../resources/scim-state.js';
import { noRouteError } from './no-route.js';

const JSON_TYPES = ['application/scim+json', 'application/json'];

export function jsonBody(router: Router<ScimState>): Middleware<ScimState> {
  const read = jsonBodyReader();
  return async (ctx, next) => {
    if (BODY_METHODS.has(ctx.method)) {
      const route = checkRoute(router, ctx.path, ctx.method);
      if (route.kind !== 'matched') throw noRouteError(route, ctx.method, ctx.state.baseUrl + ctx.path);
      const type = ctx.get('content-type');
      if (type && !ctx.is(JSON_TYPES)) throw new UnsupportedMediaTypeError(type.split(';')[0]!.trim());
      const failure = await read(ctx);
      if (failure === 'tooLarge') throw new PayloadTooLargeError(BODY_LIMIT);
      if (failure === 'unsupportedEncoding') throw new UnsupportedEncodingError(ctx.get('content-encoding'));
      if (failure === 'undecodable')
        throw new InvalidSyntaxError('The request body could not be decoded as its Content-Encoding says');
      if (failure === 'invalidJson') throw new InvalidSyntaxError('The request body is not valid JSON');
    }
    await next();
  };
}
