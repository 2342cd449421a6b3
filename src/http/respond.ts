export const SCIM_CONTENT_TYPE = 'application/scim+json';

/** Answers `status` with a SCIM body, or with none (204). */
export function respond(
  ctx: { status: number; body: unknown; type: string },
  status: number,
  body?: unknown,
): void {
  ctx.status = status;
  if (body !== undefined) {
    ctx.body = body;
    ctx.type = SCIM_CONTENT_TYPE;
  }
}
