// The Okta SCIM 2.0 SPEC Test (the Runscope/BlazeMeter test Okta asks OIN integrations to pass),
// re-expressed against a live scimd: its 12 request steps in order, in one test, with its headers and
// random values. Each step makes exactly Okta's assertions, counted by the step's last argument; the
// comments keep the running total, which ends at Okta's 52. Where Okta only
// checks "not empty" or "is a number" and the value is known here, the one assertion checks the exact
// value instead (which implies Okta's check). Okta pauses 5-10 s between steps; nothing here needs that.
import { performance } from 'node:perf_hooks';
import { beforeAll, describe, expect, it } from 'vitest';
import { type LiveMount, useLiveServer } from '../live-server.js';
import { sequence } from '../sequence.js';
import { LIST, SCIM_ERROR, SPEC_HEADERS, SPEC_POST_HEADERS, specValues, USER } from './okta.js';

/** Registers the SPEC test against a live scimd served as `mount` says. */
export function oktaSpecTest(mount: LiveMount = 'app'): void {
  const live = useLiveServer(mount);
  const v = specValues();

  /** "not_empty" for a value whose exact content the server chooses (an id, an error detail). */
  const NOT_EMPTY = expect.stringMatching(/\S/);

  /** The one user that exists before the test starts (Okta requires it: step 1 reads Resources[0]). */
  const seed = {
    userName: 'barbara.jensen@example.com',
    givenName: 'Barbara',
    familyName: 'Jensen',
    email: 'bjensen@example.com',
  };
  let seedId: string;

  // Values the steps save for later ones, as Okta's variables do.
  let isvUserId: string;
  let idUserOne: string;

  const get = (path: string) => live.scim('GET', path, { headers: SPEC_HEADERS });
  const filterByUserName = (userName: string) => `/Users?filter=userName%20eq%20%22${userName}%22`;

  /** The create body of steps 6 and 8 (step 8 repeats it, with the userName as its email value). */
  const createBody = (email: string) => ({
    schemas: [USER],
    userName: v.userName,
    name: { givenName: v.givenName, familyName: v.familyName },
    emails: [{ primary: true, value: email, type: 'work' }],
    displayName: `${v.givenName} ${v.familyName}`,
    active: true,
  });

  beforeAll(async () => {
    const res = await live.scim('POST', '/Users', {
      body: {
        schemas: [USER],
        userName: seed.userName,
        name: { givenName: seed.givenName, familyName: seed.familyName },
        emails: [{ value: seed.email, type: 'work', primary: true }],
        displayName: `${seed.givenName} ${seed.familyName}`,
        active: true,
      },
    });
    if (res.status !== 201) throw new Error(`seeding the existing user: ${res.status} ${res.text}`);
    seedId = res.body.id;
  });

  describe('Okta SCIM 2.0 SPEC Test', () => {
    const { step, run } = sequence();

    step(
      '1. Required Test: Test Users endpoint',
      async () => {
        // running total 12
        const res = await get('/Users?count=1&startIndex=1');
        const first = res.body?.Resources?.[0];
        expect(res.status, res.text).toBe(200);
        expect(res.body.Resources).toHaveLength(1); // Okta: not empty
        expect(res.body.schemas).toEqual([LIST]); // Okta: has the ListResponse URN
        expect(res.body.itemsPerPage).toBe(1); // Okta: is a number
        expect(res.body.startIndex).toBe(1); // Okta: is a number
        expect(res.body.totalResults).toBe(1); // Okta: is a number
        expect(first?.id).toBe(seedId); // Okta: not empty
        expect(first?.name?.familyName).toBe(seed.familyName); // Okta: not empty
        expect(first?.name?.givenName).toBe(seed.givenName); // Okta: not empty
        expect(first?.userName).toBe(seed.userName); // Okta: not empty
        expect(first?.active).toBe(true); // Okta: not empty
        expect(first?.emails?.[0]?.value).toBe(seed.email); // Okta: not empty
        isvUserId = first?.id;
      },
      12,
    );

    step(
      '2. Required Test: Get Users/{{id}}',
      async () => {
        // running total 20
        const res = await get(`/Users/${isvUserId}`);
        expect(res.status, res.text).toBe(200);
        expect(res.body.id).toEqual(NOT_EMPTY);
        expect(res.body.name?.familyName).toBe(seed.familyName); // Okta: not empty
        expect(res.body.name?.givenName).toBe(seed.givenName); // Okta: not empty
        expect(res.body.userName).toBe(seed.userName); // Okta: not empty
        expect(res.body.active).toBe(true); // Okta: not empty
        expect(res.body.emails?.[0]?.value).toBe(seed.email); // Okta: not empty
        expect(res.body.id).toBe(isvUserId);
      },
      8,
    );

    step(
      '3. Required Test: Test invalid User by username',
      async () => {
        // running total 23
        const res = await get(filterByUserName(v.invalidUserEmail));
        expect(res.status, res.text).toBe(200);
        expect(res.body.schemas).toEqual([LIST]); // Okta: has the ListResponse URN
        expect(res.body.totalResults).toBe(0);
      },
      3,
    );

    step(
      '4. Required Test: Test invalid User by ID',
      async () => {
        // running total 26
        const res = await get(`/Users/${v.userIdThatDoesNotExist}`);
        expect(res.status, res.text).toBe(404);
        expect(res.body?.detail).toEqual(NOT_EMPTY);
        expect(res.body?.schemas).toEqual([SCIM_ERROR]); // Okta: has the Error URN
      },
      3,
    );

    step(
      "5. Required Test: Make sure random user doesn't exist",
      async () => {
        // running total 29
        const res = await get(filterByUserName(v.email));
        expect(res.status, res.text).toBe(200);
        expect(res.body.totalResults).toBe(0);
        expect(res.body.schemas).toEqual([LIST]); // Okta: has the ListResponse URN
      },
      3,
    );

    step(
      '6. Required Test: Create Okta user with realistic values',
      async () => {
        // running total 36
        const res = await live.scim('POST', '/Users', {
          headers: SPEC_POST_HEADERS,
          body: createBody(v.email),
        });
        expect(res.status, res.text).toBe(201);
        expect(res.body.active).toBe(true);
        expect(res.body.id).toEqual(NOT_EMPTY);
        expect(res.body.name?.familyName).toBe(v.familyName);
        expect(res.body.name?.givenName).toBe(v.givenName);
        expect(res.body.schemas).toContain(USER);
        expect(res.body.userName).toBe(v.userName);
        idUserOne = res.body.id;
      },
      7,
    );

    step(
      '7. Required Test: Verify that user was created',
      async () => {
        // running total 40
        const res = await get(`/Users/${idUserOne}`);
        expect(res.status, res.text).toBe(200);
        expect(res.body.userName).toBe(v.userName);
        expect(res.body.name?.familyName).toBe(v.familyName);
        expect(res.body.name?.givenName).toBe(v.givenName);
      },
      4,
    );

    step(
      '8. Required Test: Expect failure when recreating user with same values',
      async () => {
        // running total 41
        const res = await live.scim('POST', '/Users', {
          headers: SPEC_POST_HEADERS,
          body: createBody(v.userName),
        });
        expect(res.status, res.text).toBe(409);
      },
      1,
    );

    step(
      '9. Required Test: Username Case Sensitivity Check',
      async () => {
        // Okta checks only the status here; flows.test.ts checks that an other-case userName finds the user.
        // running total 42
        const res = await get(filterByUserName(v.userNameCaps));
        expect(res.status, res.text).toBe(200);
      },
      1,
    );

    step(
      '10. Optional Test: Verify Groups endpoint',
      async () => {
        // running total 44
        const started = performance.now();
        const res = await get('/Groups');
        const elapsed = performance.now() - started;
        expect(res.status, res.text).toBe(200);
        expect(elapsed).toBeLessThan(600);
        // Okta's step script (not one of its 52 assertions): with groups, Resources is an array; without,
        // it logs "No Groups found in the endpoint".
        if (res.body.totalResults >= 1 && !Array.isArray(res.body.Resources)) {
          throw new Error(`Resources is not an array: ${res.text}`);
        }
      },
      2,
    );

    step(
      '11. Required Test: Check status 401',
      async () => {
        // running total 48
        const res = await live.scim('GET', filterByUserName(v.userNameCaps), {
          headers: SPEC_HEADERS,
          auth: 'non-token',
        });
        expect(res.status, res.text).toBe(401);
        expect(res.body?.detail).toEqual(NOT_EMPTY);
        expect(res.body?.status).toBe('401');
        expect(res.text).toContain(SCIM_ERROR); // Okta: the body has the Error URN
      },
      4,
    );

    step(
      '12. Required Test: Check status 404',
      async () => {
        // running total 52
        const res = await get('/Users/00919288221112222');
        expect(res.status, res.text).toBe(404);
        expect(res.body?.detail).toEqual(NOT_EMPTY);
        expect(res.body?.status).toBe('404');
        expect(res.body?.schemas).toEqual([SCIM_ERROR]); // Okta: has the Error URN
      },
      4,
    );

    it("passes its 12 steps in order with Okta's 52 assertions", async () => {
      expect.assertions(52);
      await run();
    });
  });
}
