// What each organization's IdP asks and how it goes, for sync health (sync-health.service.ts): counts
// by minute, token, operation and outcome, and the recent failed requests. Requests are aggregated
// in the process and written in one statement every few seconds, so recording costs a request no
// write of its own. A process that is stopped writes what it holds; one that crashes loses at most
// the last FLUSH_MS of activity.
import type { Kysely } from 'kysely';
import { isUuid } from '../db/ids.js';
import type { DB } from '../db/tables.js';
import { loggedPath } from '../http/logged-path.js';
import type { Outcome } from '../http/scim-operation.js';
import type { Logger } from '../log.js';
import { type CountRow, type FailureRow, insertActivity } from './sync-activity.repository.js';

/** How often a process writes what it has aggregated. */
const FLUSH_MS = 5_000;
/** What a process holds at most between writes (the database may be what is failing). */
const MAX_COUNT_ROWS = 20_000;
const MAX_FAILURES = 2_000;

/** A SCIM request once answered, as after-answer.ts hands it over. */
export interface AnsweredRequest {
  readonly orgId: string;
  /** The token that made it, also when it was refused as expired or revoked; null when none matched. */
  readonly tokenId: string | null;
  /** scim-operation.ts scimOperationOf and outcomeOf. */
  readonly operation: string;
  readonly outcome: Outcome;
  readonly method: string;
  /** The path after the organization's base URL. */
  readonly path: string;
  readonly status: number;
  readonly scimType?: string | undefined;
  /** Why it failed, as the error says (http/scim-errors.ts FailureReason). */
  readonly reason?: string | undefined;
  /** What scimd answered, without the client's values (scim-operation.ts redactedDetail). */
  readonly detail?: string | undefined;
  readonly requestId: string;
  readonly at: Date;
}

export class SyncActivity {
  #counts = new Map<string, CountRow>();
  #failures: FailureRow[] = [];
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Kysely<DB>,
    private readonly options: { readonly logger?: Logger; readonly enabled?: boolean } = {},
  ) {}

  /** Writes what was aggregated every FLUSH_MS, until stop(). */
  start(): void {
    this.#timer ??= setInterval(() => void this.flush(), FLUSH_MS).unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flush();
  }

  record(request: AnsweredRequest): void {
    // A path that names no organization id has no organization to count for.
    if (this.options.enabled === false || !isUuid(request.orgId)) return;
    const orgId = request.orgId.toLowerCase();
    const { outcome } = request;
    this.#add({
      orgId,
      tokenId: request.tokenId,
      minute: new Date(Math.floor(request.at.getTime() / 60_000) * 60_000),
      operation: request.operation,
      outcome,
      requests: 1,
      lastAt: request.at,
    });
    if (outcome === 'success') return;
    if (this.#failures.length >= MAX_FAILURES) this.#failures.shift();
    this.#failures.push({
      orgId,
      tokenId: request.tokenId,
      at: request.at,
      method: request.method,
      path: loggedPath(request.path),
      status: request.status,
      scimType: request.scimType ?? null,
      reason: request.reason ?? null,
      detail: request.detail ?? '',
      requestId: request.requestId,
    });
  }

  /** Writes what was aggregated since the last write; what cannot be written is kept for the next. */
  flush(): Promise<void> {
    this.#flushing = this.#flushing.then(() => this.#write());
    return this.#flushing;
  }

  async #write(): Promise<void> {
    if (this.#counts.size === 0 && this.#failures.length === 0) return;
    const counts = [...this.#counts.values()];
    const failures = this.#failures;
    this.#counts = new Map();
    this.#failures = [];
    try {
      await insertActivity(this.db, counts, failures);
    } catch (err) {
      this.options.logger?.warn({ err }, 'could not write sync activity; keeping it for the next write');
      for (const row of counts) this.#add(row);
      this.#failures = [...failures, ...this.#failures].slice(-MAX_FAILURES);
    }
  }

  #add(row: CountRow): void {
    const key = `${row.orgId} ${row.tokenId} ${row.minute.getTime()} ${row.operation} ${row.outcome}`;
    const counted = this.#counts.get(key);
    if (counted) {
      counted.requests += row.requests;
      if (row.lastAt > counted.lastAt) counted.lastAt = row.lastAt;
    } else if (this.#counts.size < MAX_COUNT_ROWS) this.#counts.set(key, { ...row });
  }
}
