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

/** A write refused by a foreign key (23503): the row it refers to is gone. */
export function isForeignKeyViolation(error: unknown): boolean {
  return (error as { code?: unknown })?.code === '23503';
}
