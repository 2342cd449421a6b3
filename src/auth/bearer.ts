// The credential of an `Authorization: Bearer <token>` header (RFC 6750 §2.1), for the SCIM and the admin API.
const BEARER = /^Bearer\s+(\S+)\s*$/i;

export function bearerToken(authorization: string | undefined): string | undefined {
  return authorization ? BEARER.exec(authorization)?.[1] : undefined;
}
