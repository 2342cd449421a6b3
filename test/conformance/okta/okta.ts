// What the Okta conformance tests share: the URNs they check, the headers Okta's clients send, and the
// random values the Okta SCIM 2.0 SPEC Test's initial script makes.
import { randomInt } from 'node:crypto';

export { GROUP, LIST, patchOp, SCIM_ERROR, USER } from '../../helpers/scim.js';

/** The headers on every request of the SPEC Test except its two POSTs (GETs too carry a Content-Type). */
export const SPEC_HEADERS = {
  Accept: 'application/scim+json',
  'Accept-Charset': 'utf-8',
  'Content-Type': 'application/scim+json; charset=utf-8',
  'User-Agent': 'OKTA SCIM Integration',
} as const;

/** The SPEC Test's two POSTs carry only these (and Authorization): plain JSON, no User-Agent. */
export const SPEC_POST_HEADERS = {
  Accept: 'application/scim+json; charset=utf-8',
  'Content-Type': 'application/json',
} as const;

/** What Okta's provisioning client sends on reads. */
export const CLIENT_HEADERS = {
  Accept: 'application/scim+json',
  'User-Agent': 'Okta SCIM Client 1.0.0',
} as const;

/** ... and on writes with a body (Okta sends both content types; the create flow uses the other). */
export const CLIENT_WRITE_HEADERS = {
  ...CLIENT_HEADERS,
  'Content-Type': 'application/scim+json; charset=utf-8',
} as const;

export const CLIENT_JSON_HEADERS = { ...CLIENT_HEADERS, 'Content-Type': 'application/json' } as const;

const digits = (n: number) => Array.from({ length: n }, () => String(randomInt(10))).join('');
const letters = (n: number, from: string) =>
  Array.from({ length: n }, () => from[randomInt(from.length)]).join('');

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';

/** The values of the SPEC Test's initial script, freshly drawn. */
export function specValues() {
  const givenName = `Runscope${digits(3)}`;
  const familyName = `${letters(1, UPPER)}${letters(8, LOWER)}${digits(3)}`;
  const email = `${givenName}${familyName}@atko.com`;
  return {
    givenName,
    familyName,
    email,
    userName: email,
    userNameCaps: email.toUpperCase(),
    invalidUserEmail: 'abcdefgh@atko.com',
    userIdThatDoesNotExist: '010101001010101011001010101011',
  };
}
