// The organization's audit log, its types: who (a token, the admin, a console session or a setup
// link) did what to which resource, with what outcome, under which request id. Never a secret and
// never an attribute value.

export interface AuditEntry {
  readonly orgId: string;
  /** `admin` or `token:<id>`. */
  readonly actor: string;
  /** e.g. `user.create`, `group.patch`, `token.rotate`. */
  readonly action: string;
  readonly resourceType: string | undefined;
  readonly resourceId: string | undefined;
  readonly status: number;
  readonly requestId: string | undefined;
}

/** The audit log's resource type of an organization's action: `token.rotate` → `Token`. */
export function resourceTypeOf(action: string): string {
  const kind = action.slice(0, action.indexOf('.'));
  return (
    ({ org: 'Org', token: 'Token', setup_link: 'SetupLink', schema: 'Schema' } as Record<string, string>)[
      kind
    ] ?? kind
  );
}

export interface AuditEvent {
  id: string;
  at: string;
  actor: string;
  action: string;
  resourceType: string | null;
  resourceId: string | null;
  status: number;
  requestId: string | null;
}

/** A token or a setup link an entry names (as its actor or its resource), as it is now. */
export interface AuditSubject {
  readonly kind: 'token' | 'setup_link';
  /** A token's name; a setup link's note, '' when it has none. */
  readonly name: string;
  /** The first characters of its secret, as the console lists it. */
  readonly prefix: string;
}

export interface AuditQuery {
  readonly limit: number;
  /** Events older than this id (the previous page's last). */
  readonly before?: string | undefined;
  readonly resourceId?: string | undefined;
  readonly since?: Date | undefined;
  readonly until?: Date | undefined;
}
