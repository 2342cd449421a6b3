// Okta's SPEC test through createScimd mounted at /identity inside a Koa app and a bare node:http
// server: the same 12 steps and 52 assertions as scimd serving on its own.
import { describe } from 'vitest';
import { oktaSpecTest } from '../conformance/okta/spec-test.js';

describe.each(['koa', 'node:http'] as const)('mounted in %s', (mount) => {
  oktaSpecTest(mount);
});
