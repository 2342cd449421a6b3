// A write refused by a unique index, as SCIM's 409 uniqueness (RFC 7644 §3.12).
import { DuplicateKeyError } from '../db/constraints.js';
import { UniquenessError } from '../http/scim-errors.js';

/** `write`, or 409 with `detail` when `index` refused it; any other failure as it is. */
export async function uniqueOn<T>(index: string, detail: string, write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (error) {
    if (error instanceof DuplicateKeyError && error.constraint === index) throw new UniquenessError(detail);
    throw error;
  }
}
