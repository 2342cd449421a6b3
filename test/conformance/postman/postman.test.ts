// Microsoft's SCIM Postman collection against a live scimd on an empty organization. Every assertion
// must pass except the listed deviations; each is a place where the collection contradicts RFC 7644
// or scimd's documented behaviour (README). A deviation that starts passing fails the test too, so
// the list stays true.
import { expect, it } from 'vitest';
import { useLiveServer } from '../live-server.js';
import { runCollection } from './run.js';

const EXPECTED_DEVIATIONS: Readonly<Record<string, string>> = {
  'Get ServiceProviderConfig :: Status code is 200':
    'The collection asks /serviceConfiguration; RFC 7644 §4 names the endpoint /ServiceProviderConfig (an upstream fix was never merged).',
  'Get ServiceProviderConfig :: Pach supported is true':
    'Same request (/serviceConfiguration). /ServiceProviderConfig does say patch.supported: true.',
  'Get group by id :: Body contians user':
    'It sends a member as {"displayName": "new User", "value": id}; members have no displayName sub-attribute (RFC 7643 §4.2: display), so scimd ignores it and shows the user\'s own name.',
  'Patch user omalley new username :: Status code is 204':
    'scimd answers a user PATCH with 200 and the user, which RFC 7644 §3.5.2 allows and Okta and other checkers expect; 204 comes with Prefer: return=minimal.',
  'patch user omalley active with boolean :: Status code is 204': 'As above: 200 with the user.',
  'Group patch add member :: Status code is 204':
    'It adds the member "string id 1", which is not a user of the organization: scimd answers 400 invalidValue.',
  'Group patch add member2 :: Status code is 204': 'As above, with "string id 2".',
};

const live = useLiveServer();

it('passes every assertion of the collection except the listed deviations', async () => {
  const result = await runCollection(live.origin, `/scim/v2/${live.orgId}`, live.token);
  // 78 requests and 107 assertions without the Get Token folder.
  expect(result.requests).toBe(78);
  expect(result.assertions).toBe(107);
  expect(
    result.failed.filter((f) => !(f in EXPECTED_DEVIATIONS)),
    'unexpected failures',
  ).toEqual([]);
  expect(
    Object.keys(EXPECTED_DEVIATIONS).filter((d) => !result.failed.includes(d)),
    'listed deviations that now pass: take them off the list',
  ).toEqual([]);
}, 120_000);
