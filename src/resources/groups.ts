// What a group and its members are once stored, as services and routes see them: no row types, no SQL.
import type { ScimResource } from './validate.js';

export interface StoredGroup {
  readonly id: string;
  /** Every attribute but members. */
  readonly attributes: ScimResource;
  readonly created: Date;
  readonly lastModified: Date;
}

export interface StoredMember {
  readonly userId: string;
  /** What the client sent as the member's display, if anything. */
  readonly display: string | null;
  readonly userDisplayName: string | null;
  readonly userName: string;
}

export interface NewMember {
  readonly userId: string;
  readonly display?: string | undefined;
}
