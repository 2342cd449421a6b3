// `scimd/client`: a product follows scimd's change feed, typed (`import { FeedClient } from
// 'scimd/client'`). Nothing of the server comes with it: the client, its errors and the change types.
export * from '../changes/change-types.js';
export {
  FeedClient,
  type FeedClientOptions,
  type Follower,
  type ReadOptions,
  type Retry,
} from './feed-client.js';
export { AccessDenied, CursorExpired, FeedError } from './feed-errors.js';
export type { Backoff } from './retry.js';
