// What this build of scimd supports. ServiceProviderConfig is rendered from here, so it says only
// what is true; each feature flips when the code that serves it lands.
import { DEFAULT_COUNT, MAX_COUNT } from '../resources/list-response.js';

export const capabilities = {
  patch: false,
  filter: false,
  sort: false,
  cursorPagination: false,
  defaultPageSize: DEFAULT_COUNT,
  maxPageSize: MAX_COUNT,
} as const;
