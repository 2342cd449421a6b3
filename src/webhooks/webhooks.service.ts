// Webhook endpoints as the admin API and the CLI see them: validation, secrets shown once, the
// delivery log, redelivery and a test ping.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { CHANGE_TYPES, isChangeType } from '../changes/changes.js';
import { numberChanges } from '../changes/changes.repository.js';
import { isUuid } from '../db/ids.js';
import type { DB } from '../db/tables.js';
import { isStorableText, UNSTORABLE_TEXT_MESSAGE } from '../db/text.js';
import { invalidRequest, notFound } from '../http/admin-errors.js';
import { parseBody } from '../http/parse-body.js';
import { getOrg } from '../orgs/orgs.service.js';
import { refusedUrl } from './address.js';
import * as deliveriesRepo from './deliveries.repository.js';
import { announceEndpointChange, type WebhookDispatcher } from './dispatcher.js';
import * as endpointsRepo from './endpoints.repository.js';
import type { SecretBox } from './secret-box.js';
import { generateWebhookSecret } from './signing.js';

export interface WebhookDeps {
  readonly db: Kysely<DB>;
  readonly box: SecretBox;
  readonly allowPrivate: boolean;
  /** Sends pings; absent where no dispatcher runs. */
  readonly dispatcher?:
    | Pick<WebhookDispatcher, 'ping' | 'endpointsChanged' | 'endpointChanged' | 'holder'>
    | undefined;
}

const events = z
  .array(z.string())
  .min(1, 'must name at least one event type')
  .max(CHANGE_TYPES.length)
  .superRefine((list, ctx) => {
    const unknown = list.find((t) => !isChangeType(t));
    if (unknown !== undefined)
      ctx.addIssue({ code: 'custom', message: `unknown type ${unknown}; see GET /admin/v1/webhooks/events` });
    if (new Set(list).size !== list.length)
      ctx.addIssue({ code: 'custom', message: 'must not repeat a type' });
  });
const description = z.string().refine(isStorableText, UNSTORABLE_TEXT_MESSAGE).pipe(z.string().max(500));
const url = z.string().max(2000);
const createBody = z.strictObject({
  url,
  events,
  description: description.optional(),
  orgId: z.string().refine(isUuid, 'is not an organization id').optional(),
});
const updateBody = z
  .strictObject({
    url: url.optional(),
    events: events.optional(),
    description: description.optional(),
    active: z.boolean().optional(),
  })
  .refine((b) => Object.keys(b).length > 0, 'url, events, description or active is required');

function checkUrl(value: string, allowPrivate: boolean): void {
  const refused = refusedUrl(value, allowPrivate);
  if (refused) throw invalidRequest(`url: ${refused}`);
}

function renderEndpoint(endpoint: endpointsRepo.StoredEndpoint) {
  return {
    id: endpoint.id,
    orgId: endpoint.orgId,
    url: endpoint.url,
    events: endpoint.events,
    description: endpoint.description,
    state: endpoint.state,
    active: endpoint.state === 'active',
    disabledReason: endpoint.disabledReason,
    createdAt: endpoint.createdAt.toISOString(),
    updatedAt: endpoint.updatedAt.toISOString(),
  };
}

export const eventTypes = () => ({ events: [...CHANGE_TYPES] });

/** A new endpoint: it receives the changes written from now on. Its secret is shown here only. */
export async function createEndpoint(deps: WebhookDeps, body: unknown) {
  const input = parseBody(createBody, body);
  checkUrl(input.url, deps.allowPrivate);
  if (input.orgId) await getOrg(deps.db, input.orgId.toLowerCase());
  const secret = generateWebhookSecret();
  const { last } = await numberChanges(deps.db);
  const endpoint = await endpointsRepo.insertEndpoint(
    deps.db,
    {
      id: randomUUID(),
      orgId: input.orgId?.toLowerCase() ?? null,
      url: input.url,
      events: input.events,
      description: input.description ?? '',
      secretBox: deps.box.seal(secret),
    },
    last,
    new Date(),
  );
  deps.dispatcher?.endpointsChanged();
  return { ...renderEndpoint(endpoint), secret };
}

export async function listEndpoints(deps: WebhookDeps) {
  return { webhooks: (await endpointsRepo.listEndpoints(deps.db)).map(renderEndpoint) };
}

async function getEndpoint(deps: WebhookDeps, id: string): Promise<endpointsRepo.StoredEndpoint> {
  const endpoint = await endpointsRepo.findEndpoint(deps.db, id);
  if (!endpoint) throw notFound(`Webhook ${id} not found`);
  return endpoint;
}

export async function showEndpoint(deps: WebhookDeps, id: string) {
  const endpoint = await getEndpoint(deps, id);
  return { ...renderEndpoint(endpoint), ...(await deliveriesRepo.pendingOf(deps.db, id)) };
}

/**
 * Changes an endpoint and announces it; once this returns, nothing read before the change is sent by
 * this process, and other processes stop as soon as they hear of it (their leases end with it).
 */
async function changeEndpoint(
  deps: WebhookDeps,
  id: string,
  change: Parameters<typeof endpointsRepo.updateEndpoint>[2],
): Promise<endpointsRepo.StoredEndpoint> {
  const announced = endpointsRepo.changesSending(change);
  const endpoint = await deps.db.transaction().execute(async (trx) => {
    const updated = await endpointsRepo.updateEndpoint(trx, id, change, new Date());
    if (updated && announced) await announceEndpointChange(trx, id, deps.dispatcher);
    return updated;
  });
  if (!endpoint) throw notFound(`Webhook ${id} not found`);
  if (announced) await deps.dispatcher?.endpointChanged(id);
  return endpoint;
}

/**
 * Changes url, events, description, or `active`: false stops sending (nothing is lost); true resumes
 * where it stopped, an endpoint disabled by scimd included.
 */
export async function updateEndpoint(deps: WebhookDeps, id: string, body: unknown) {
  const input = parseBody(updateBody, body);
  if (input.url !== undefined) checkUrl(input.url, deps.allowPrivate);
  const endpoint = await changeEndpoint(deps, id, {
    ...(input.url !== undefined ? { url: input.url } : {}),
    ...(input.events !== undefined ? { events: input.events } : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
    ...(input.active !== undefined ? { state: input.active ? 'active' : 'inactive' } : {}),
  });
  if (input.active) deps.dispatcher?.endpointsChanged();
  return renderEndpoint(endpoint);
}

export async function deleteEndpoint(deps: WebhookDeps, id: string): Promise<void> {
  const deleted = await deps.db.transaction().execute(async (trx) => {
    const found = await endpointsRepo.deleteEndpoint(trx, id);
    if (found) await announceEndpointChange(trx, id, deps.dispatcher);
    return found;
  });
  if (!deleted) throw notFound(`Webhook ${id} not found`);
  await deps.dispatcher?.endpointChanged(id);
}

/**
 * A new secret, shown here only. Once this returns, this process signs with it alone; other
 * processes stop signing with the old one as soon as they hear of the change.
 */
export async function rotateSecret(deps: WebhookDeps, id: string) {
  const secret = generateWebhookSecret();
  const endpoint = await changeEndpoint(deps, id, { secretBox: deps.box.seal(secret) });
  return { ...renderEndpoint(endpoint), secret };
}

const deliveriesQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).optional(),
  before: z
    .string()
    .regex(/^\d{1,18}$/, 'is not a delivery position')
    .optional(),
  state: z.enum(['pending', 'delivered', 'expired']).optional(),
});

/** The delivery log, newest first: attempts, last status, latency, error, next attempt. */
export async function listDeliveries(deps: WebhookDeps, id: string, query: Record<string, unknown>) {
  const input = parseBody(deliveriesQuery, query);
  await getEndpoint(deps, id);
  const limit = input.limit ?? 50;
  const deliveries = await deliveriesRepo.listDeliveries(deps.db, id, {
    limit,
    ...(input.before ? { before: BigInt(input.before) } : {}),
    ...(input.state ? { state: input.state } : {}),
  });
  return { deliveries, nextCursor: deliveries.length === limit ? deliveries.at(-1)!.position : null };
}

/** Sends one delivery again, now (it may then arrive after newer changes of its resource). */
export async function redeliver(deps: WebhookDeps, id: string, position: string) {
  await getEndpoint(deps, id);
  const found = /^\d{1,18}$/.test(position)
    ? await deliveriesRepo.redeliver(deps.db, id, BigInt(position))
    : undefined;
  if (!found) throw notFound(`Delivery ${position} of webhook ${id} not found`);
  return found;
}

export async function ping(deps: WebhookDeps, id: string) {
  const endpoint = await getEndpoint(deps, id);
  if (!deps.dispatcher) throw invalidRequest('This process sends no webhooks');
  const sent = await deps.dispatcher.ping(endpoint);
  return {
    delivered: sent.status !== undefined && sent.status >= 200 && sent.status < 300,
    status: sent.status ?? null,
    latencyMs: sent.latencyMs,
    error: sent.error ?? null,
  };
}
