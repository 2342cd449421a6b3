// The console's failures as an error page, with the status and headers the one classifier
// (http/failure.ts) gives them, a way back, and the operator's navigation when signed in; a customer's
// (setup link) pages keep the operator's brand and lead back to the setup pages only.
import type { Middleware } from 'koa';
import { classifyFailure } from '../http/failure.js';
import type { ConsoleState, ConsoleTools } from './console-deps.js';
import { sendPage } from './respond.js';
import { errorPage } from './views/layout.js';
import { operatorNav } from './views/operator.js';
import { isSetupPath, setupMasthead } from './views/setup.js';

export function renderConsoleErrors({
  logger,
  metrics,
  brand,
}: Pick<ConsoleTools, 'logger' | 'metrics' | 'brand'>): Middleware<ConsoleState> {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const { requestId, session } = ctx.state;
      const failure = classifyFailure(error, { logger, metrics, requestId, surface: 'console' });
      for (const [name, value] of Object.entries(failure.headers)) ctx.set(name, value);
      const setup = isSetupPath(ctx.path);
      const back = setup ? '/console/setup' : ctx.get('referer') || '/console';
      const nav = session && !setup ? operatorNav(session.csrf) : undefined;
      const page = errorPage(
        failure.status,
        `${failure.message} (request ${requestId})`,
        safeBack(back),
        nav,
        setup ? setupMasthead(brand, Boolean(session?.setupLink)) : undefined,
      );
      sendPage(ctx, page, failure.status);
    }
  };
}

/** Only a path of this console is a place to go back to. */
const safeBack = (back: string) => {
  const path = back.startsWith('/') ? back : URL.canParse(back) ? new URL(back).pathname : '';
  return path.startsWith('/console') ? path : '/console';
};
