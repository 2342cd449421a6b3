// An organization as a SCIM request sees it once its token is checked: the settings that decide its
// answers, carried with the token check (scim-auth.ts).
import type { DeprovisioningMode } from '../db/tables.js';

export interface OrgContext {
  readonly id: string;
  readonly groupSync: boolean;
  readonly deprovisioning: DeprovisioningMode;
  /** Signs the organization's paging cursors. */
  readonly cursorKey: Buffer;
  /** The version of the organization's own schemas (0: it has none): which registry it reads. */
  readonly schemasVersion: number;
}
