// The credential of an `Authorization: Bearer <token>` header (RFC 6750 §2.1), for the SCIM and the admin API.
import { timingSafeEqual } from 'node:crypto';
import { hashSecret } from '../secrets.js';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

export function bearerToken(authorization: string | undefined): string | undefined {
  return authorization ? BEARER.exec(authorization)?.[1] : undefined;
}

/** Whether a presented bearer token (bearerToken) is `secret`, compared by hash in constant time. */
export function secretMatcher(secret: string): (presented: string | undefined) => boolean {
  const expected = hashSecret(secret);
  return (presented) => presented !== undefined && timingSafeEqual(hashSecret(presented), expected);
}
