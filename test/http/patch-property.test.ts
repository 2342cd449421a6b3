// A property: PATCH over HTTP and the database, then GET, equals applyPatch run in memory on the
// previous GET; a PATCH that fails changes nothing.
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ScimError } from '../../src/http/scim-errors.js';
import { applyPatch } from '../../src/resources/patch.js';
import { parsePatchRequest } from '../../src/resources/patch-request.js';
import { resourceTypes } from '../../src/schema/registry.js';
import { type Harness, type Tenant, useHarness } from '../helpers/harness.js';
import {
  type Json,
  type Op,
  patchBody,
  schemasOf,
  stored,
  uniqueName,
  userCalls,
  withActive,
} from '../helpers/patch-users.js';
import { ENTERPRISE } from '../helpers/scim.js';

let harness: Harness;
let t: Tenant;
useHarness(async (h) => {
  harness = h;
  t = await harness.tenant();
});
const { createUser, getUser } = userCalls(() => t);

const PROP_START = {
  displayName: 'Start',
  title: 'T0',
  nickName: 'n0',
  name: { givenName: 'G0', familyName: 'F0' },
  emails: [
    { value: 'w0@corp.example', type: 'work', primary: true },
    { value: 'h0@corp.example', type: 'home' },
  ],
  [ENTERPRISE]: { department: 'D0' },
};

// Mostly valid values; a few that break the schema (a number for a string, "maybe" for a boolean).
const text = fc.oneof(
  { arbitrary: fc.constantFrom('A', 'b', 'Zed', '', 'x@corp.example'), weight: 8 },
  { arbitrary: fc.constant(null), weight: 1 },
  { arbitrary: fc.constant(7), weight: 1 },
);
const activeValue = fc.constantFrom<unknown>(true, false, 'False', 'true', 'TRUE', null, 'maybe');
const emailsValue = fc.constantFrom<unknown>(
  [{ value: 'w1@corp.example', type: 'work', primary: true }],
  [
    { value: 'h1@corp.example', type: 'home' },
    { value: 'w2@corp.example', type: 'work', primary: 'true' },
  ],
  { value: 'o1@corp.example', type: 'other' },
  [],
  null,
);
const MENU: Record<string, fc.Arbitrary<unknown>> = {
  displayName: text,
  title: text,
  nickName: text,
  'name.givenName': text,
  'emails[type eq "work"].value': text,
  emails: emailsValue,
  active: activeValue,
  [`${ENTERPRISE}:department`]: text,
};
// Pathless keys: the menu without the filtered path (Entra keeps those as their own operations).
const PATHLESS_KEYS = Object.keys(MENU).filter((k) => !k.includes('['));

const pathOp: fc.Arbitrary<Op> = fc.constantFrom(...Object.keys(MENU)).chain((path) =>
  fc.oneof(
    fc.record({
      op: fc.constantFrom('add', 'Add', 'replace', 'Replace'),
      path: fc.constant(path),
      value: MENU[path]!,
    }),
    fc.record({ op: fc.constantFrom('remove', 'Remove'), path: fc.constant(path) }),
  ),
);
const pathlessOp: fc.Arbitrary<Op> = fc
  .subarray(PATHLESS_KEYS, { minLength: 1, maxLength: 3 })
  .chain((keys) =>
    fc.record({
      op: fc.constantFrom('add', 'replace', 'Replace'),
      value: fc
        .tuple(...keys.map((k) => MENU[k]!))
        .map((values) => Object.fromEntries(keys.map((k, i) => [k, values[i]]))),
    }),
  );
const operation = fc.oneof({ arbitrary: pathOp, weight: 3 }, { arbitrary: pathlessOp, weight: 1 });

describe('PATCH property', () => {
  it('HTTP PATCH then GET equals applyPatch on the previous GET; a failing PATCH changes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(operation, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 3 }),
        async (patches) => {
          const created = await createUser({ userName: uniqueName('prop'), ...PROP_START });
          let prev = await getUser(created.id);
          for (const list of patches) {
            const body = patchBody(list);
            let expected: Json | undefined;
            let failure: ScimError | undefined;
            try {
              const result = applyPatch(stored(prev), parsePatchRequest(body), resourceTypes.User, {
                id: String(prev.id),
              });
              expected = withActive(result.attributes);
            } catch (error) {
              if (!(error instanceof ScimError)) throw error;
              failure = error;
            }
            const res = await t.patch(`/Users/${String(prev.id)}`, body);
            const next = await getUser(prev.id);
            if (failure) {
              expect(res.status).toBe(400);
              expect(res.body.scimType).toBe(failure.scimType);
              expect(next).toEqual(prev);
            } else {
              expect(res.status, JSON.stringify(res.body)).toBe(200);
              expect(res.body).toEqual(next);
              expect(withActive(stored(next))).toEqual(expected);
              expect(next.schemas).toEqual(schemasOf(expected!));
              if (isDeepStrictEqual(expected, withActive(stored(prev)))) {
                expect(next.meta).toEqual(prev.meta);
              }
            }
            prev = next;
          }
        },
      ),
      { numRuns: 150 },
    );
  }, 600_000);
});
