// What this build of scimd supports. ServiceProviderConfig is rendered from here, so it says only
// what is true; each feature flips when the code that serves it lands.
import { CURSOR_TIMEOUT_SECONDS } from '../resources/cursor.js';
import { DEFAULT_COUNT, MAX_COUNT } from '../resources/list-response.js';

export const capabilities = {
  patch: true,
  filter: true,
  sort: true,
  cursorPagination: true,
  defaultPageSize: DEFAULT_COUNT,
  maxPageSize: MAX_COUNT,
  cursorTimeout: CURSOR_TIMEOUT_SECONDS,
} as const;
