// One delivery of a change to an endpoint: its id and body, and what the receiver's answer makes of
// it (delivered; retried, when; or the endpoint disabled, why).
import type { StoredChange } from '../changes/changes.js';
import { changeJson } from '../changes/changes.js';
import type { Attempt } from './deliveries.repository.js';
import type { Sent } from './sender.js';

/** Runs `jobs`, `limit` at a time; their results in order. */
export async function inTurns<T>(jobs: readonly (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results = new Array<T>(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const n = next++;
      results[n] = await jobs[n]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker));
  return results;
}

/** An attempt's outcome from what the receiver answered, the delivery having failed `attempts` times before. */
export function attemptOf(
  position: bigint,
  attempts: number,
  sent: Sent,
  retryDelaysMs: readonly number[],
): Attempt & { disableBecause?: string } {
  const base = { position, status: sent.status ?? null, latencyMs: sent.latencyMs };
  if (sent.status !== undefined && sent.status >= 200 && sent.status < 300) {
    return { ...base, outcome: 'delivered', error: null };
  }
  const error = sent.error ?? `the receiver answered ${sent.status}`;
  if (sent.status === 410) {
    return {
      ...base,
      outcome: 'retry',
      error,
      retryInMs: 0,
      disableBecause: 'the receiver answered 410 Gone',
    };
  }
  const failures = attempts + 1;
  if (failures > retryDelaysMs.length) {
    return {
      ...base,
      outcome: 'retry',
      error,
      retryInMs: 0,
      disableBecause: `a delivery failed ${failures} times (last: ${error})`,
    };
  }
  return { ...base, outcome: 'retry', error, retryInMs: retryDelay(retryDelaysMs[failures - 1]!, sent) };
}

/** The same for every attempt of one change to one endpoint: receivers dedupe by it. */
export function deliveryId(endpointId: string, changeId: string): string {
  return `whd_${changeId}_${endpointId.replaceAll('-', '')}`;
}

/** `{id, type, timestamp, data}`, with the change as the feed shows it for data. */
export function deliveryBody(id: string, change: StoredChange): string {
  return `{"id":${JSON.stringify(id)},"type":${JSON.stringify(change.type)},"timestamp":${JSON.stringify(change.occurredAt)},"data":${changeJson(change)}}`;
}

/** The longest Retry-After honoured. */
const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

/** The scheduled delay with ±20% jitter, or the receiver's Retry-After (a day at most). */
function retryDelay(scheduled: number, sent: Sent): number {
  if (sent.retryAfterMs !== undefined && (sent.status === 429 || sent.status === 503)) {
    return Math.min(sent.retryAfterMs, MAX_RETRY_AFTER_MS);
  }
  return Math.round(scheduled * (0.8 + Math.random() * 0.4));
}
