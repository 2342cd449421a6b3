// What a user is once stored, as services and routes see it: no row types, no SQL.
import type { ScimResource } from './validate.js';

/** A group the user belongs to (RFC 7643 §4.1.2 `groups`). */
export interface UserGroup {
  readonly groupId: string;
  readonly displayName: string;
}

export interface StoredUser {
  readonly id: string;
  readonly attributes: ScimResource;
  /** The attributes as stored, as JSON text, when read that way (a page of a list). */
  readonly json?: string;
  readonly created: Date;
  readonly lastModified: Date;
  /** The user's groups in display order, read in the same statement; undefined when not asked for. */
  readonly groups: readonly UserGroup[] | undefined;
  /** The stored row's version, when read by id: a write given it applies only if no other came first. */
  readonly version?: string;
}
