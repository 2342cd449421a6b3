// The pool's connections shared fairly among organizations. One organization may hold at most
// `perOrg` of the `size` connections at once; what it asks for beyond that waits in its own queue,
// so its slow requests queue behind each other and not in front of everybody else's. A connection
// that comes free goes to the organizations with waiters in turn (round robin), not to whoever asked
// first. A request that waits longer than `waitMs` is refused with PoolWaitTimeoutError (503).
import { PoolWaitTimeoutError } from './failures.js';

interface Waiter {
  readonly admit: () => void;
  readonly timer: NodeJS.Timeout;
}

export interface FairShareOptions {
  /** Connections in the pool. */
  readonly size: number;
  /** Connections one organization may hold at once. */
  readonly perOrg: number;
  /** How long a request may wait for a connection. */
  readonly waitMs: number;
}

export class FairShare {
  #inUse = 0;
  readonly #held = new Map<string, number>();
  /** Organizations with waiters, in the order they are to be served; each with its own queue. */
  readonly #waiting = new Map<string, Waiter[]>();

  constructor(readonly options: FairShareOptions) {}

  /** Resolves once `org` may take a connection; the caller must `leave(org)` when it gives it back. */
  enter(org: string): Promise<void> {
    if (!this.#waiting.has(org) && this.#mayTake(org)) {
      this.#take(org);
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        admit: () => {
          clearTimeout(waiter.timer);
          this.#take(org);
          resolve();
        },
        timer: setTimeout(() => {
          this.#forget(org, waiter);
          reject(new PoolWaitTimeoutError(this.options.waitMs));
        }, this.options.waitMs),
      };
      const queue = this.#waiting.get(org);
      if (queue) queue.push(waiter);
      else this.#waiting.set(org, [waiter]);
    });
  }

  leave(org: string): void {
    this.#inUse--;
    const held = (this.#held.get(org) ?? 1) - 1;
    if (held > 0) this.#held.set(org, held);
    else this.#held.delete(org);
    this.#admitWaiters();
  }

  /** Connections in use, and requests waiting for one (for tests and metrics). */
  get inUse(): number {
    return this.#inUse;
  }

  get waiting(): number {
    let n = 0;
    for (const queue of this.#waiting.values()) n += queue.length;
    return n;
  }

  #mayTake(org: string): boolean {
    return this.#inUse < this.options.size && (this.#held.get(org) ?? 0) < this.options.perOrg;
  }

  #take(org: string): void {
    this.#inUse++;
    this.#held.set(org, (this.#held.get(org) ?? 0) + 1);
  }

  /** Hands free connections to the waiting organizations in turn, one each per pass. */
  #admitWaiters(): void {
    let admitted = true;
    while (admitted && this.#waiting.size > 0 && this.#inUse < this.options.size) {
      admitted = false;
      // The order as this pass starts: an organization served goes to the back for the next pass.
      for (const org of [...this.#waiting.keys()]) {
        if (this.#inUse >= this.options.size) break;
        const queue = this.#waiting.get(org)!;
        if (!this.#mayTake(org)) continue;
        const waiter = queue.shift()!;
        // Served: to the back of the line (a Map keeps insertion order), or out of it.
        this.#waiting.delete(org);
        if (queue.length > 0) this.#waiting.set(org, queue);
        waiter.admit();
        admitted = true;
      }
    }
  }

  #forget(org: string, waiter: Waiter): void {
    const queue = this.#waiting.get(org);
    if (!queue) return;
    const at = queue.indexOf(waiter);
    if (at >= 0) queue.splice(at, 1);
    if (queue.length === 0) this.#waiting.delete(org);
  }
}
