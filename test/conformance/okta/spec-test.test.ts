// The Okta SCIM 2.0 SPEC Test against scimd serving on its own (test/server mounts it in other apps).
import { oktaSpecTest } from './spec-test.js';

oktaSpecTest();
