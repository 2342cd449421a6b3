// The SCIM surface's paths: `/scim/v2/{organization id}` and what follows it (RFC 7644 §3.2).
const SCIM_PATH = /^\/scim\/v2(?:\/([^/]*))?(\/.*)?$/i;

/** Whether a path is under the SCIM prefix (an organization's base URL, or the prefix alone). */
export function isScimPath(path: string): boolean {
  return SCIM_PATH.test(path);
}

/** The organization segment of a SCIM path, as sent (`''` when none), and the path after it. */
export function splitScimPath(path: string): { organization: string; rest: string } | undefined {
  const match = SCIM_PATH.exec(path);
  return match ? { organization: match[1] ?? '', rest: match[2] ?? '' } : undefined;
}
