// A write refused by a unique index, told in the database's own terms: the service that made the
// write knows what it means for its resource (SCIM's 409 uniqueness).
export class DuplicateKeyError extends Error {
  constructor(readonly constraint: string) {
    super(`duplicate key: ${constraint}`);
  }
}

/** Rethrows a unique violation (23505) as a DuplicateKeyError naming its index; anything else as is. */
export function rethrowDuplicateKey(error: unknown): never {
  const e = error as { code?: unknown; constraint?: unknown };
  if (e?.code === '23505' && typeof e.constraint === 'string') throw new DuplicateKeyError(e.constraint);
  throw error;
}

/** The foreign key (23503) that refused a write, because the row it refers to is gone; else undefined. */
export function violatedForeignKey(error: unknown): string | undefined {
  const e = error as { code?: unknown; constraint?: unknown };
  if (e?.code !== '23503') return undefined;
  return typeof e.constraint === 'string' ? e.constraint : 'unknown';
}

/** The key from a member row to its user: a user deleted while being added leaves it dangling. */
export const MEMBER_USER_KEY = 'group_members_user_fkey';
