import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Token secrets are 256 random bits, base64url, with a recognisable prefix for secret scanners. */
const TOKEN_PREFIX = 'scimd_';
const PREFIX_LENGTH = TOKEN_PREFIX.length + 8;

export function generateSecret(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

/** SHA-256 of a secret, as stored. (crypto.hash: a seventh of createHash's cost for a short text.) */
export function hashSecret(secret: string): Buffer {
  return hash('sha256', secret, 'buffer');
}

/** The same hash in base64, to key what a process remembers of a token without keeping the secret. */
export function secretDigest(secret: string): string {
  return hash('sha256', secret, 'base64');
}

/** The part of a secret that is stored in clear, shown in listings and used to find the row. */
export function secretPrefix(secret: string): string {
  return secret.slice(0, PREFIX_LENGTH);
}

export function looksLikeSecret(value: string): boolean {
  return value.startsWith(TOKEN_PREFIX) && value.length > PREFIX_LENGTH;
}

/** Compares the hash of a presented secret with a stored hash in constant time. */
export function hashMatches(presentedHash: Buffer, storedHash: Buffer): boolean {
  return presentedHash.length === storedHash.length && timingSafeEqual(presentedHash, storedHash);
}
