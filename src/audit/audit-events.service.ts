// An organization's audit log as the admin API and the console read it: newest first, by page.
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { isUuid } from '../db/ids.js';
import type { DB } from '../db/tables.js';
import { parseBody } from '../http/parse-body.js';
import { getOrg } from '../orgs/orgs.service.js';
import type { AuditEvent, AuditSubject } from './audit.js';
import { auditSubjects, listAudit } from './audit.repository.js';

const eventsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).optional(),
  cursor: z
    .string()
    .regex(/^\d{1,19}$/, 'is not a cursor from this API')
    // Event ids are Postgres bigints: a larger number cannot be one.
    .refine(
      (c) => !/^\d+$/.test(c) || BigInt(c) <= 9_223_372_036_854_775_807n,
      'is not a cursor from this API',
    )
    .optional(),
  resourceId: z.string().min(1).max(200).optional(),
  since: z.iso.datetime({ offset: true }).optional(),
  until: z.iso.datetime({ offset: true }).optional(),
});

/** The organization's audit log, newest first, 50 a page unless `limit` says otherwise. */
export async function listEvents(db: Kysely<DB>, orgId: string, query: unknown) {
  const input = parseBody(eventsQuery, query);
  await getOrg(db, orgId);
  const { events, nextBefore } = await listAudit(db, orgId, {
    limit: input.limit ?? 50,
    before: input.cursor,
    resourceId: input.resourceId,
    since: input.since ? new Date(input.since) : undefined,
    until: input.until ? new Date(input.until) : undefined,
  });
  return { events, nextCursor: nextBefore ?? null };
}

/** The actor `token:<id>` or `setup_link:<id>`: the id it names. */
const ACTOR_ID = /^(?:token|setup_link):(.+)$/;

/**
 * The tokens and setup links the events name, as actor or as resource, by id, so a page can name them
 * rather than show their ids; one that no longer exists is missing.
 */
export async function subjectsOf(
  db: Kysely<DB>,
  orgId: string,
  events: readonly AuditEvent[],
): Promise<ReadonlyMap<string, AuditSubject>> {
  const ids = new Set<string>();
  for (const event of events) {
    const actor = ACTOR_ID.exec(event.actor)?.[1];
    if (actor) ids.add(actor);
    if ((event.resourceType === 'Token' || event.resourceType === 'SetupLink') && event.resourceId)
      ids.add(event.resourceId);
  }
  return auditSubjects(
    db,
    orgId,
    [...ids].filter(isUuid).map((id) => id.toLowerCase()),
  );
}
