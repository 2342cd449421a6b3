// Reading the change feed in tests through scimd/client's FeedClient, as a product would.
import type { Change, FeedClient, ReadOptions } from '../../src/client/index.js';

/** Every change after `options.after`, page by page, and where the feed ends now. */
export async function readToEnd(
  feed: FeedClient,
  options: ReadOptions = {},
): Promise<{ changes: Change[]; end: string }> {
  const changes: Change[] = [];
  let after = options.after;
  for (;;) {
    const page = await feed.read({ ...options, after, limit: 1000 });
    changes.push(...page.changes);
    if (page.nextCursor === after) return { changes, end: page.nextCursor };
    after = page.nextCursor;
  }
}
