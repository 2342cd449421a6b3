// Prometheus metrics (prom-client), served at /metrics behind the admin credential. Labels come from
// bounded sets only: route templates, methods, status classes, operations, outcomes, failure kinds
// and webhook endpoint ids. No organization, user or token is ever a label.
import type { Kysely } from 'kysely';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { FairShare } from '../db/fair-share.js';
import type { DB } from '../db/tables.js';
import type { Outcome } from '../http/scim-operation.js';
import { type WebhookBacklog, webhookBacklog } from '../webhooks/deliveries.repository.js';

/** OpenTelemetry's advised boundaries for http.server.request.duration, in seconds. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

export interface MetricsSources {
  readonly db: Kysely<DB>;
  readonly share: Pick<FairShare, 'inUse' | 'waiting' | 'options'>;
  /** Process metrics (CPU, memory, event loop, handles): once per process. */
  readonly processMetrics?: boolean;
}

export class Metrics {
  readonly registry = new Registry();
  readonly #requestDuration: Histogram<'http_request_method' | 'http_route' | 'http_response_status_class'>;
  readonly #scimOperations: Counter<'resource' | 'operation' | 'outcome'>;
  readonly #statementTimeouts: Counter;
  readonly #poolRejections: Counter;
  readonly #feedPosition: Gauge;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    if (sources.processMetrics) collectDefaultMetrics({ register: this.registry });
    this.#requestDuration = new Histogram({
      name: 'http_server_request_duration_seconds',
      help: 'Duration of HTTP server requests (OpenTelemetry http.server.request.duration)',
      labelNames: ['http_request_method', 'http_route', 'http_response_status_class'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.#scimOperations = new Counter({
      name: 'scimd_scim_operations_total',
      help: 'SCIM requests by resource, operation and outcome',
      labelNames: ['resource', 'operation', 'outcome'],
      registers,
    });
    this.#statementTimeouts = new Counter({
      name: 'scimd_db_statement_timeouts_total',
      help: 'Requests answered 503 because a statement ran past DATABASE_STATEMENT_TIMEOUT_MS',
      registers,
    });
    this.#poolRejections = new Counter({
      name: 'scimd_db_fair_share_rejections_total',
      help: "Requests answered 503 because their organization's share of the pool stayed busy",
      registers,
    });
    this.#feedPosition = new Gauge({
      name: 'scimd_change_feed_position',
      help: 'The newest change feed position this process knows of',
      registers,
    });
    const { share } = sources;
    new Gauge({
      name: 'scimd_db_pool_connections',
      help: 'Database pool connections by state',
      labelNames: ['state'],
      registers,
      collect() {
        this.set({ state: 'in_use' }, share.inUse);
        this.set({ state: 'idle' }, Math.max(0, share.options.size - share.inUse));
      },
    });
    new Gauge({
      name: 'scimd_db_pool_waiting_requests',
      help: 'Requests waiting for a database connection',
      registers,
      collect() {
        this.set(share.waiting);
      },
    });
    webhookGauges(sources.db, registers);
  }

  /** A request answered: its duration, under the route it matched (never its path). */
  requestDone(method: string, route: string, status: number, seconds: number): void {
    this.#requestDuration.observe(
      {
        http_request_method: method,
        http_route: route,
        http_response_status_class: `${Math.floor(status / 100)}xx`,
      },
      seconds,
    );
  }

  scimOperation(operation: string, outcome: Outcome): void {
    const [resource = 'other', verb = 'other'] = operation.split('.');
    this.#scimOperations.inc({ resource, operation: verb, outcome });
  }

  /** A database failure answered 503 (db/failures.ts kinds). */
  databaseFailure(kind: string): void {
    if (kind === 'timeout') this.#statementTimeouts.inc();
    else if (kind === 'busy') this.#poolRejections.inc();
  }

  feedAdvanced(position: bigint): void {
    this.#feedPosition.set(Number(position));
  }
}

/** Each webhook endpoint's backlog and retries, read from the database when scraped. */
function webhookGauges(db: Kysely<DB>, registers: Registry[]): void {
  // One query a scrape: the first gauge collected reads, the others use what it read.
  let reading: Promise<WebhookBacklog[]> = Promise.resolve([]);
  const gauge = (name: string, help: string, value: (row: WebhookBacklog) => number, reads = false) =>
    new Gauge({
      name,
      help,
      labelNames: ['endpoint'],
      registers,
      async collect() {
        if (reads) reading = webhookBacklog(db).catch(() => []);
        const rows = await reading;
        this.reset();
        for (const row of rows) this.set({ endpoint: row.id }, value(row));
      },
    });
  gauge(
    'scimd_webhook_endpoint_lag_changes',
    'Changes on the feed not yet turned into deliveries for the endpoint',
    (r) => Number(r.lag),
    true,
  );
  gauge('scimd_webhook_endpoint_pending_deliveries', 'Deliveries waiting to be sent or retried', (r) =>
    Number(r.pending),
  );
  gauge(
    'scimd_webhook_endpoint_failing_deliveries',
    'Deliveries that failed at least once and are waiting for a retry',
    (r) => Number(r.failing),
  );
}
