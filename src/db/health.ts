// Readiness on a connection of its own: /readyz asks whether this process can reach the database,
// which a busy pool must not hide (a load balancer would pull a healthy instance) and which a pool
// full of connections to a dead server must not fake.
import pg from 'pg';

export class HealthProbe {
  #client: pg.Client | undefined;
  #inFlight: Promise<boolean> | undefined;
  #closed = false;

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly timeoutMs = 2_000,
  ) {}

  /** Whether `select 1` answers within the timeout. Concurrent calls share one probe. */
  ping(): Promise<boolean> {
    this.#inFlight ??= this.#probe().finally(() => {
      this.#inFlight = undefined;
    });
    return this.#inFlight;
  }

  /** Closes the probe's connection; a closed database is not ready. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#disconnect();
  }

  async #disconnect(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => {});
  }

  async #probe(): Promise<boolean> {
    if (this.#closed) return false;
    try {
      const client = this.#client ?? (await this.#connect());
      await client.query('select 1');
      return true;
    } catch {
      await this.#disconnect();
      return false;
    }
  }

  async #connect(): Promise<pg.Client> {
    const client = new pg.Client({
      ...this.config,
      connectionTimeoutMillis: this.timeoutMs,
      query_timeout: this.timeoutMs,
    });
    // A connection lost between probes is noticed by the next probe, which connects again.
    client.on('error', () => {
      if (this.#client === client) this.#client = undefined;
    });
    await client.connect();
    this.#client = client;
    return client;
  }
}
