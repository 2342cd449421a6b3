// What the console's routes are given: the admin API's dependencies, its sessions, and its audit.
import type { Context } from 'koa';
import type { AdminApiDeps } from '../admin/admin-api.js';
import type { FailureThrottle } from '../http/failure-throttle.js';
import type { ConsoleSession, Sessions } from '../sessions/sessions.js';

/** The admin API's dependencies but the change feed (the console reads changes from their table). */
export type ConsoleDeps = Omit<AdminApiDeps, 'changes'> & {
  /** Wrong sign-ins by client address; SIGN_IN_THROTTLE's unless given (tests give their clock). */
  readonly signInThrottle?: FailureThrottle;
};

/** What a console action is, for its audit entry. */
interface ConsoleAction {
  readonly orgId: string;
  /** As the admin API names it: `token.create`, `setup_link.revoke`, … */
  readonly action: string;
  readonly resourceId?: string;
  /** The actor when it is not the session's (a setup link being opened has no session yet). */
  readonly actor?: string;
}

/**
 * Runs a console action and writes its audit entry (the session's actor, the outcome's status), as
 * the admin API does for its own; `idOf` names the resource a creation made.
 */
export type Audited = <T>(
  ctx: Context,
  action: ConsoleAction,
  run: () => Promise<T>,
  idOf?: (result: T) => string,
) => Promise<T>;

/** Writes the audit entry of a console action done already. */
export type RecordAction = (ctx: Context, done: ConsoleAction & { readonly status: number }) => Promise<void>;

export type ConsoleTools = ConsoleDeps & {
  readonly sessions: Sessions;
  readonly signInThrottle: FailureThrottle;
  readonly audited: Audited;
  readonly record: RecordAction;
};

/** The state of a request that passed the session check. */
export interface ConsoleState {
  session: ConsoleSession;
}
