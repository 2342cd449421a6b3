// The credential of an `Authorization: Bearer <token>` header (RFC 6750 §2.1), for the SCIM and the admin API.
import { timingSafeEqual } from 'node:crypto';
import { hashSecret } from './secrets.js';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

export function bearerToken(authorization: string | undefined): string | undefined {
  return authorization ? BEARER.exec(authorization)?.[1] : undefined;
}

/** Whether an Authorization header carries `secret`, compared by hash in constant time. */
export function bearerMatcher(secret: string): (authorization: string | undefined) => boolean {
  const expected = hashSecret(secret);
  return (authorization) => {
    const presented = bearerToken(authorization);
    return presented !== undefined && timingSafeEqual(hashSecret(presented), expected);
  };
}
