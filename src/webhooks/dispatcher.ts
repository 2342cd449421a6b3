// Sends webhook deliveries. Each scimd process runs one dispatcher: it leases the active endpoints no
// other process holds, turns each one's new changes into deliveries, and sends what is due in waves of
// up to `concurrency` requests, never two of one resource at once or out of order. A delivery stays
// pending until the receiver answers 2xx: across restarts, crashes and processes (a lease lapses in
// `leaseMs` when its process ends, and another takes the endpoint over), nothing is lost. A change to
// an endpoint's URL, secret, events or state stops what was read before it: this process's requests
// for it are cut off before the change is answered, other processes' when they hear of it.
import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { Kysely } from 'kysely';
import type { ChangeFeed } from '../changes/change-feed.js';
import type { PingDelivery } from '../changes/change-types.js';
import type { ChangeType, StoredChange } from '../changes/changes.js';
import { numberChanges, readChanges } from '../changes/changes.repository.js';
import type { Listening } from '../db/database.js';
import { notifyChannel } from '../db/notify.js';
import type { DB } from '../db/tables.js';
import type { Logger } from '../log.js';
import * as deliveriesRepo from './deliveries.repository.js';
import { attemptOf, deliveryBody, deliveryId, inTurns } from './delivery.js';
import * as endpointsRepo from './endpoints.repository.js';
import type { SecretBox } from './secret-box.js';
import { Sender, type Sent } from './sender.js';
import { deliveryHeaders } from './signing.js';

export interface DispatcherOptions {
  /** Each request's time limit. */
  readonly timeoutMs: number;
  /** Requests in flight to one endpoint at most. */
  readonly concurrency: number;
  /** The wait before each retry; when a delivery has failed once more than this lists, its endpoint is disabled. */
  readonly retryDelaysMs: readonly number[];
  readonly allowPrivate: boolean;
  readonly logger?: Logger;
  /** Database.listen, where this process can LISTEN: other processes' endpoint changes. */
  readonly listen?:
    | ((channel: string, onMessage: (payload: string) => void, onGap: () => void) => Listening)
    | undefined;
}

/** The channel a change to an endpoint is announced on: `<announcing dispatcher>:<endpoint id>`. */
const ENDPOINT_CHANGES_CHANNEL = 'scimd_webhook_endpoints';

/**
 * Inside the transaction that changes an endpoint's URL, secret, events or state, or deletes it:
 * other processes hear of it on commit. `from` is this process's dispatcher, which hears it first.
 */
export function announceEndpointChange(
  trx: Kysely<DB>,
  id: string,
  from: Pick<WebhookDispatcher, 'holder'> | undefined,
): Promise<void> {
  return notifyChannel(trx, ENDPOINT_CHANGES_CHANNEL, `${from?.holder ?? ''}:${id}`);
}

/** An endpoint this process is sending to: what stops its requests, and those in flight. */
interface Serving {
  readonly stop: AbortController;
  readonly inFlight: Set<Promise<unknown>>;
}

/** How often a dispatcher with nothing to do looks again (retries coming due, other processes' changes). */
const IDLE_MS = 500;
/** A wave's size, in multiples of the requests one endpoint may have in flight. */
const WAVE_PER_REQUEST_SLOT = 8;

export class WebhookDispatcher {
  /** This process, as the endpoints' leases and its announcements name it. */
  readonly holder = `${process.pid}-${randomBytes(6).toString('hex')}`;
  private readonly sender: Sender;
  private readonly leaseMs: number;
  /** When this process renews its leases next. */
  private renewAt = 0;
  /** The newest feed position this process has heard of, and the newest a turn has served up to. */
  private newest = 0n;
  private served = 0n;
  private running: Promise<void> | undefined;
  private stopped = false;
  private wake: (() => void) | undefined;
  private unsubscribe: (() => void) | undefined;
  /** The last turn found no endpoint to serve: new changes need no turn, only new endpoints do. */
  private noEndpoints = false;
  private readonly serving = new Map<string, Serving>();
  /** Counts endpoint changes heard of; each changed endpoint keeps the count of its last change. */
  private heard = 0;
  private readonly changedAt = new Map<string, number>();
  private listening: Listening | undefined;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly feed: Pick<ChangeFeed, 'onAdvance'>,
    private readonly box: SecretBox,
    private readonly options: DispatcherOptions,
  ) {
    this.sender = new Sender({
      timeoutMs: options.timeoutMs,
      allowPrivate: options.allowPrivate,
      connections: options.concurrency,
    });
    // Long enough that a turn (a wave of requests, each within its time limit) never outlives it.
    this.leaseMs = Math.max(30_000, 3 * options.timeoutMs);
  }

  start(): void {
    this.unsubscribe = this.feed.onAdvance((last) => {
      if (last > this.newest) this.newest = last;
      if (!this.noEndpoints) this.wake?.();
    });
    // Without a listener, another process's change still ends this one's lease: its wave is not
    // recorded, and the next reads the endpoint anew.
    this.listening = this.options.listen?.(
      ENDPOINT_CHANGES_CHANNEL,
      (payload) => {
        const at = payload.indexOf(':');
        if (payload.slice(0, at) !== this.holder) void this.endpointChanged(payload.slice(at + 1));
      },
      () => {},
    );
    this.running = this.loop();
  }

  /**
   * An endpoint was created or made active here: look at once rather than at the next idle round
   * (other processes' endpoints are found within IDLE_MS).
   */
  endpointsChanged(): void {
    this.noEndpoints = false;
    this.wake?.();
  }

  /**
   * An endpoint's URL, secret, events or state changed, or it was deleted: nothing read before the
   * change is sent from now on. Requests in flight to it are cut off, and this resolves once they
   * have ended.
   */
  async endpointChanged(id: string): Promise<void> {
    this.changedAt.set(id, ++this.heard);
    const serving = this.serving.get(id);
    if (!serving) return;
    serving.stop.abort();
    await Promise.allSettled(serving.inFlight);
  }

  /** Finishes the requests in flight, lets go of its endpoints, and stops. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    await this.listening?.stop();
    this.wake?.();
    await this.running;
    await endpointsRepo.releaseEndpoints(this.db, this.holder).catch(() => {});
    await this.sender.close();
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      let busy = false;
      try {
        busy = await this.turn();
      } catch (err) {
        this.options.logger?.warn({ err }, 'webhook dispatch failed; trying again');
      }
      // Changes heard of during the turn are served at once.
      if (!busy && !this.stopped && this.newest <= this.served) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, IDLE_MS);
          this.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wake = undefined;
      }
    }
  }

  /** One pass over this process's endpoints; true when there may be more to send at once. */
  private async turn(): Promise<boolean> {
    // Changes heard of after this count may postdate what is read next.
    const readAt = this.heard;
    let endpoints = await endpointsRepo.endpointsToServe(this.db, this.holder);
    this.noEndpoints = endpoints.length === 0;
    if (this.noEndpoints) {
      this.served = this.newest; // nothing to serve it to
      return false;
    }
    if (Date.now() >= this.renewAt || endpoints.some((e) => !e.held)) {
      endpoints = await endpointsRepo.leaseEndpoints(this.db, this.holder, this.leaseMs);
      this.renewAt = Date.now() + this.leaseMs / 3;
    }
    const last = await this.lastPosition();
    const busy = await Promise.all(
      endpoints.map((endpoint) => this.serveUntilChanged(endpoint, last, readAt)),
    );
    return busy.some(Boolean);
  }

  /** Serves an endpoint as read, until it changes: then its wave is dropped, and the next turn reads it anew. */
  private async serveUntilChanged(
    endpoint: endpointsRepo.ServedEndpoint,
    last: bigint,
    readAt: number,
  ): Promise<boolean> {
    const serving: Serving = { stop: new AbortController(), inFlight: new Set() };
    // Every delivery in flight to the endpoint listens on it: as many as WEBHOOK_CONCURRENCY.
    setMaxListeners(this.options.concurrency + 1, serving.stop.signal);
    this.serving.set(endpoint.id, serving);
    if ((this.changedAt.get(endpoint.id) ?? 0) > readAt) return true;
    try {
      return await this.serve(endpoint, last, serving);
    } finally {
      this.serving.delete(endpoint.id);
    }
  }

  /**
   * The feed's last position: the newest this process has heard of, or, when it has heard of none
   * since the last turn, the database's (which also numbers what committed meanwhile, and sees other
   * processes' changes where LISTEN is not available).
   */
  private async lastPosition(): Promise<bigint> {
    if (this.newest <= this.served) {
      const { last } = await numberChanges(this.db);
      if (last > this.newest) this.newest = last;
    }
    this.served = this.newest;
    return this.newest;
  }

  private async serve(
    endpoint: endpointsRepo.ServedEndpoint,
    last: bigint,
    serving: Serving,
  ): Promise<boolean> {
    const secret = this.box.open(endpoint.secretBox);
    if (secret === undefined) {
      await endpointsRepo.disableEndpoint(
        this.db,
        endpoint.id,
        'its signing secret cannot be opened with this key (SCIMD_SECRET_KEY or the admin token changed): rotate the secret',
      );
      return false;
    }
    let position = endpoint.feedPosition;
    // Without rows waiting, a wave is the feed alone: no query for retries or queued changes.
    let hasPending = endpoint.hasPending;
    const started = Date.now();
    // A wave sends up to this many, `concurrency` at a time, and records them in one statement.
    const wave = this.options.concurrency * WAVE_PER_REQUEST_SLOT;
    while (!this.stopped && Date.now() - started < this.leaseMs / 3) {
      // Retries, and changes queued behind a failed one of their resource, come first.
      const due = hasPending ? await deliveriesRepo.dueDeliveries(this.db, endpoint.id, wave) : [];
      // Then the feed after the endpoint's position: sent at once unless their resource has a
      // delivery pending, or comes twice in the wave; those are queued as rows, to go after it.
      const fresh =
        position < last && due.length < wave
          ? await readChanges(
              this.db,
              position,
              last,
              { orgId: endpoint.orgId ?? undefined, types: endpoint.events as ChangeType[] },
              wave - due.length,
            )
          : [];
      if (due.length === 0 && fresh.length === 0) {
        // Past changes it does not subscribe to.
        if (position < last) await this.moveTo(endpoint, position, last);
        return false;
      }
      const blocked = hasPending
        ? await deliveriesRepo.resourcesPending(
            this.db,
            endpoint.id,
            fresh.map((c) => c.resourceId),
          )
        : new Set<string>();
      for (const d of due) blocked.add(d.change?.resourceId ?? '');
      const sending: StoredChange[] = [];
      const queued: StoredChange[] = [];
      for (const change of fresh) {
        if (blocked.has(change.resourceId)) queued.push(change);
        else sending.push(change);
        blocked.add(change.resourceId);
      }
      const jobs = [
        ...due.map((d) => () => this.attempt(endpoint, secret, d.position, d.attempts, d.change, serving)),
        ...sending.map((c) => () => this.attempt(endpoint, secret, BigInt(c.cursor), 0, c, serving)),
      ];
      const results = await inTurns(jobs, this.options.concurrency);
      // The endpoint changed: what was sent is sent again as it now says.
      if (serving.stop.signal.aborted) return true;
      const retried = results.slice(0, due.length);
      const sent = results.slice(due.length);
      // A full read stops at its last change; a short one has seen the feed up to `last`.
      const read = position < last && due.length < wave;
      const through = !read
        ? position
        : fresh.length === wave - due.length
          ? BigInt(fresh.at(-1)!.cursor)
          : last;
      const taken: deliveriesRepo.Taken[] = [
        ...sending.map((change, n) => ({ change, attempt: sent[n] })),
        ...queued.map((change) => ({ change, attempt: undefined })),
      ];
      if (
        !(await deliveriesRepo.recordWave(
          this.db,
          endpoint.id,
          this.holder,
          { from: position, through },
          taken,
          retried,
        ))
      ) {
        return false; // another process holds the endpoint now
      }
      position = through;
      if (queued.length > 0 || results.some((a) => a.outcome === 'retry')) hasPending = true;
      const disable = results.find((a) => a.disableBecause)?.disableBecause;
      if (disable) {
        await endpointsRepo.disableEndpoint(this.db, endpoint.id, disable);
        this.options.logger?.warn({ webhookId: endpoint.id, reason: disable }, 'webhook endpoint disabled');
        return false;
      }
    }
    return true;
  }

  /** Moves the endpoint past changes it does not subscribe to. */
  private moveTo(endpoint: endpointsRepo.ServedEndpoint, from: bigint, through: bigint): Promise<boolean> {
    return deliveriesRepo.recordWave(this.db, endpoint.id, this.holder, { from, through }, [], []);
  }

  private async attempt(
    endpoint: endpointsRepo.StoredEndpoint,
    secret: string,
    position: bigint,
    attempts: number,
    change: StoredChange | undefined,
    serving: Serving,
  ): Promise<deliveriesRepo.Attempt & { disableBecause?: string }> {
    if (serving.stop.signal.aborted)
      return { position, outcome: 'retry', status: null, latencyMs: 0, error: null, retryInMs: 0 };
    if (!change) {
      return {
        position,
        outcome: 'expired',
        status: null,
        latencyMs: 0,
        error: 'the change is past retention',
      };
    }
    const id = deliveryId(endpoint.id, change.id);
    const body = deliveryBody(id, change);
    const sending = this.sender.send(
      endpoint.url,
      body,
      deliveryHeaders(secret, { id, type: change.type }, body),
      serving.stop.signal,
    );
    serving.inFlight.add(sending);
    const sent = await sending;
    serving.inFlight.delete(sending);
    return attemptOf(position, attempts, sent, this.options.retryDelaysMs);
  }

  /** Sends a `webhook.ping` to the endpoint now, outside the feed; what the receiver answered. */
  async ping(endpoint: endpointsRepo.StoredEndpoint): Promise<Sent> {
    const secret = this.box.open(endpoint.secretBox);
    if (secret === undefined)
      return { latencyMs: 0, error: 'the signing secret cannot be opened: rotate it' };
    const id = `ping_${randomBytes(8).toString('hex')}`;
    const body = JSON.stringify({
      id,
      type: 'webhook.ping',
      timestamp: new Date().toISOString(),
      data: { webhookId: endpoint.id },
    } satisfies PingDelivery);
    return this.sender.send(endpoint.url, body, deliveryHeaders(secret, { id, type: 'webhook.ping' }, body));
  }
}
