// What the admin API's and the console's middlewares establish for the routes the domains declare.
import type Router from '@koa/router';

export interface RouteState {
  requestId: string;
  /** Who acts: `admin`, `api_key:<id>`, `console:<session id>` or `setup_link:<link id>`. */
  actor: string;
  /** The organization acted on, when no `:orgId` in the path names it (a setup link's). */
  orgId?: string;
  /** The resource acted on, when neither a route parameter nor the answer's body names it (console pages). */
  resourceId?: string;
  /** The API key that authenticated the request, when not the admin token. */
  apiKey?: string;
}

/** A router of admin API or console routes. */
export type Routes<S extends RouteState = RouteState> = Router<S>;
