// What the console's routes are given: the admin API's dependencies, its sessions, its sign-in
// throttle, the audit of its actions and the operator's brand; and what its middlewares establish for
// them.
import type { AdminApiDeps } from '../admin/admin-api.js';
import type { Audited } from '../audit/audited-action.js';
import type { FailureThrottle } from '../http/failure-throttle.js';
import type { RouteState } from '../http/route-state.js';
import type { ConsoleSession, Sessions } from '../sessions/sessions.js';
import type { Brand } from './brand.js';

/** The admin API's dependencies but the change feed (the console reads changes from their table). */
export type ConsoleDeps = Omit<AdminApiDeps, 'changes'> & {
  /** Wrong sign-ins by client address; SIGN_IN_THROTTLE's unless given (tests give their clock). */
  readonly signInThrottle?: FailureThrottle;
  /** The operator's white label (CONSOLE_BRAND_*); none unless given. */
  readonly brand?: Brand;
};

export type ConsoleTools = ConsoleDeps & {
  readonly brand: Brand;
  readonly sessions: Sessions;
  readonly signInThrottle: FailureThrottle;
  readonly audited: Audited;
};

/** The state of a request that passed the session check; its actor is the session's. */
export interface ConsoleState extends RouteState {
  session: ConsoleSession;
}
