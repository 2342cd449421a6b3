import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Secrets are 256 random bits, base64url, after a recognisable prefix for secret scanners: SCIM tokens
 * `scimd_`, the product's read-only API keys `scimdkey_`, setup links `scimdsetup_`, console sessions
 * `scimdsession_`.
 */
const TOKEN_PREFIX = 'scimd_';
export const API_KEY_PREFIX = 'scimdkey_';
export const SETUP_LINK_PREFIX = 'scimdsetup_';
export const SESSION_PREFIX = 'scimdsession_';
/** Characters after the prefix that are stored in clear. */
const CLEAR_LENGTH = 8;

export function generateSecret(prefix = TOKEN_PREFIX): string {
  return prefix + randomBytes(32).toString('base64url');
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
export function secretPrefix(secret: string, prefix = TOKEN_PREFIX): string {
  return secret.slice(0, prefix.length + CLEAR_LENGTH);
}

export function looksLikeSecret(value: string, prefix = TOKEN_PREFIX): boolean {
  return value.startsWith(prefix) && value.length > prefix.length + CLEAR_LENGTH;
}

/** Compares the hash of a presented secret with a stored hash in constant time. */
export function hashMatches(presentedHash: Buffer, storedHash: Buffer): boolean {
  return presentedHash.length === storedHash.length && timingSafeEqual(presentedHash, storedHash);
}
