// Slows a client that keeps failing a check (a wrong admin token at the console's sign-in): past a
// number of failures within a window, it is refused until the oldest of them leaves the window.
import { LRUCache } from 'lru-cache';

export interface FailureThrottleOptions {
  /** Failures a client may have within the window; the next attempt is refused. */
  readonly limit: number;
  readonly windowMs: number;
  /** Clients remembered at once (the least recent are forgotten). */
  readonly maxClients?: number;
  /** Now, in milliseconds (tests give their own clock). */
  readonly now?: () => number;
}

export class FailureThrottle {
  readonly #failures: LRUCache<string, number[]>;
  readonly #now: () => number;

  constructor(private readonly options: FailureThrottleOptions) {
    this.#failures = new LRUCache({ max: options.maxClients ?? 10_000 });
    this.#now = options.now ?? Date.now;
  }

  /** Seconds `client` must wait before its next attempt, or undefined when it may try now. */
  retryAfterSeconds(client: string): number | undefined {
    const recent = this.#recent(client);
    if (recent.length < this.options.limit) return undefined;
    return Math.max(1, Math.ceil((recent[0]! + this.options.windowMs - this.#now()) / 1000));
  }

  failed(client: string): void {
    this.#failures.set(client, [...this.#recent(client), this.#now()]);
  }

  succeeded(client: string): void {
    this.#failures.delete(client);
  }

  /** The client's failures still within the window, oldest first. */
  #recent(client: string): number[] {
    const since = this.#now() - this.options.windowMs;
    return (this.#failures.get(client) ?? []).filter((at) => at > since);
  }
}
