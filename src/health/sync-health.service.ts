// An organization's sync health: one state an operator or an IT admin can act on, and what it rests
// on (tokens' last use, counts by operation and outcome, the recent failed requests with hints).
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import type { Outcome } from '../http/scim-operation.js';
import { getOrg } from '../orgs/orgs.service.js';
import { listTokens } from '../orgs/tokens.repository.js';
import { renderToken } from '../orgs/tokens.service.js';
import { countPeople } from '../resources/counts.repository.js';
import { hintFor } from './hints.js';
import { FAILURES_KEPT, recentCounts, recentFailures } from './sync-activity.repository.js';

type HealthState =
  | 'never_connected'
  | 'credential_trouble'
  | 'failing'
  | 'idle'
  | 'token_expiring'
  | 'healthy';

export interface HealthOptions {
  /** No request for this long: idle. */
  readonly idleAfterMs: number;
  /** How many recent failed requests to show. */
  readonly failures?: number;
  /** Whether to count users and groups (one aggregate over the organization's users); yes unless false. */
  readonly people?: boolean;
}

/** A token not revoked nor replaced that expires within this long makes the state token_expiring. */
const EXPIRING_WITHIN_MS = 7 * 24 * 60 * 60_000;
/** Failed requests in a row since the last success that make the state failing. */
const FAILING_IN_A_ROW = 5;
/**
 * Requests with a token the organization does not have (or none) since the last success that make
 * credential trouble, when none has succeeded for UNKNOWN_TOKENS_QUIET_MS: one stray request (another
 * organization's token, a typo, a scanner) is not.
 */
const UNKNOWN_TOKENS_IN_A_ROW = 5;
const UNKNOWN_TOKENS_QUIET_MS = 15 * 60_000;
/** The share of the last hour's requests that failed, over at least FAILING_MIN_REQUESTS, for failing. */
const FAILING_SHARE = 0.5;
const FAILING_MIN_REQUESTS = 10;

type Tally = Record<string, Partial<Record<Outcome, number>>>;

export type OrgHealth = Awaited<ReturnType<typeof orgHealth>>;

export async function orgHealth(db: Kysely<DB>, orgId: string, now: Date, options: HealthOptions) {
  await getOrg(db, orgId);
  const [tokens, day, failures, people] = await Promise.all([
    listTokens(db, orgId),
    recentCounts(db, orgId, now),
    recentFailures(db, orgId, FAILURES_KEPT),
    options.people === false ? undefined : countPeople(db, orgId),
  ]);

  const lastHour: Tally = {};
  const lastDay: Tally = {};
  let lastRequestAt = latest(tokens.map((t) => t.lastUsedAt));
  let lastSuccessAt = latest(tokens.map((t) => t.lastSuccessAt));
  // Refused with a token of this organization that expired or was revoked (the token is known).
  let lastRefusedOwnTokenAt: Date | null = null;
  // Any answer but 401: the request came with a token of the organization.
  let lastAuthenticatedAt: Date | null = lastSuccessAt;
  for (const row of day) {
    const outcome = row.outcome as Outcome;
    add(lastDay, row.operation, outcome, Number(row.day));
    if (Number(row.hour) > 0) add(lastHour, row.operation, outcome, Number(row.hour));
    lastRequestAt = latest([lastRequestAt, row.last_at]);
    if (outcome === 'success') lastSuccessAt = latest([lastSuccessAt, row.last_at]);
    if (outcome === 'unauthorized' && row.token_id !== null)
      lastRefusedOwnTokenAt = latest([lastRefusedOwnTokenAt, row.last_at]);
    if (outcome !== 'unauthorized') lastAuthenticatedAt = latest([lastAuthenticatedAt, row.last_at]);
  }

  const since = (at: Date | null) => (f: { at: Date }) => !at || f.at > at;
  const sinceSuccess = failures.filter(since(lastSuccessAt));
  const failedInARow = sinceSuccess.filter((f) => f.status !== 404 && f.status !== 401).length;
  const unknownTokens = sinceSuccess.filter((f) => f.status === 401 && f.token_id === null).length;
  const quiet = !lastSuccessAt || now.getTime() - lastSuccessAt.getTime() >= UNKNOWN_TOKENS_QUIET_MS;
  const hour = totals(lastHour);
  const reasons: string[] = [];
  let state: HealthState = 'healthy';
  const expiring = tokens.filter(
    (t) =>
      !t.revokedAt &&
      t.expiresAt &&
      t.expiresAt > now &&
      t.expiresAt.getTime() - now.getTime() < EXPIRING_WITHIN_MS &&
      !t.replacedBy,
  );

  if (!lastRequestAt) {
    state = 'never_connected';
    reasons.push('No request has reached this organization’s SCIM base URL yet.');
  } else if (lastRefusedOwnTokenAt && (!lastSuccessAt || lastRefusedOwnTokenAt > lastSuccessAt)) {
    state = 'credential_trouble';
    reasons.push('The latest requests came with an expired or revoked token of this organization.');
  } else if (unknownTokens >= UNKNOWN_TOKENS_IN_A_ROW && quiet) {
    state = 'credential_trouble';
    reasons.push(
      `The last ${unknownTokens} requests came with a token this organization does not have, or none, and none has succeeded ${lastSuccessAt ? `since ${lastSuccessAt.toISOString()}` : 'yet'}.`,
    );
  } else if (
    failedInARow >= FAILING_IN_A_ROW ||
    (hour.counted >= FAILING_MIN_REQUESTS && hour.failed / hour.counted >= FAILING_SHARE)
  ) {
    state = 'failing';
    reasons.push(
      failedInARow >= FAILING_IN_A_ROW
        ? `The last ${failedInARow} requests failed.`
        : `${hour.failed} of the last hour’s ${hour.counted} requests failed.`,
    );
  } else if (!lastAuthenticatedAt) {
    state = 'never_connected';
    reasons.push(
      'Requests have reached this organization’s SCIM base URL, but none has come with a token of this organization yet.',
    );
  } else if (now.getTime() - lastRequestAt.getTime() > options.idleAfterMs) {
    state = 'idle';
    reasons.push(`No request since ${lastRequestAt.toISOString()}.`);
  } else if (expiring.length > 0) {
    state = 'token_expiring';
    reasons.push(`A token expires on ${expiring[0]!.expiresAt!.toISOString()}: rotate it.`);
  }

  return {
    orgId,
    state,
    reasons,
    checkedAt: now.toISOString(),
    lastRequestAt: iso(lastRequestAt),
    lastSuccessAt: iso(lastSuccessAt),
    tokens: tokens.map((t) => ({
      ...renderToken(t),
      expiresSoon: expiring.includes(t),
    })),
    requests: { lastHour, lastDay },
    users: people?.users ?? null,
    groups: people?.groups ?? null,
    recentFailures: failures.slice(0, options.failures ?? 20).map((f) => {
      const failure = { status: f.status, scimType: f.scim_type, reason: f.reason };
      return {
        at: f.at.toISOString(),
        method: f.method,
        path: f.path,
        status: f.status,
        scimType: f.scim_type,
        detail: f.detail,
        reason: f.reason,
        tokenId: f.token_id,
        requestId: f.request_id,
        hint: hintFor(failure) ?? null,
      };
    }),
  };
}

function add(tally: Tally, operation: string, outcome: Outcome, requests: number): void {
  const byOutcome = tally[operation] ?? {};
  byOutcome[outcome] = (byOutcome[outcome] ?? 0) + requests;
  tally[operation] = byOutcome;
}

/**
 * Requests that say whether sync works, and failures: not 404s (IdPs meet them in normal flows) nor
 * 401s (credential_trouble tells of those).
 */
function totals(tally: Tally): { counted: number; failed: number } {
  let counted = 0;
  let failed = 0;
  for (const byOutcome of Object.values(tally)) {
    for (const [outcome, n] of Object.entries(byOutcome)) {
      if (outcome === 'not_found' || outcome === 'unauthorized') continue;
      counted += n;
      if (outcome !== 'success') failed += n;
    }
  }
  return { counted, failed };
}

function latest(dates: readonly (Date | null | undefined)[]): Date | null {
  let newest: Date | null = null;
  for (const d of dates) if (d && (!newest || d > newest)) newest = d;
  return newest;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);
