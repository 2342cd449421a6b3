// Webhook figures: deliveries a second to a loopback receiver (a process of its own) that answers at
// once and to one that takes 50 ms, the time from a change's commit to its arrival, and what an
// endpoint costs POST /Users.
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';
import { deliveryHeaders, generateWebhookSecret } from '../src/webhooks/signing.js';
import {
  DURATION,
  load,
  machineCpuSeconds,
  perRequestMs,
  type Row,
  type Server,
  type Setup,
  warmUp,
} from './measure.js';
import { CREATE } from './scenarios.js';
import { type Seeded, userAttributes } from './seed.js';

interface Arrival {
  readonly at: number;
  readonly occurredAt: number;
}

/**
 * A receiver on loopback in a process of its own (bench/webhook-receiver.ts) answering 200 after
 * `delayMs`; when each delivery arrived comes back within 50 ms.
 */
async function receiver() {
  const arrivals: Arrival[] = [];
  const child = fork('bench/webhook-receiver.ts', [], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  child.on('message', (message: { arrivals?: [number, number][] }) => {
    for (const [at, occurredAt] of message.arrivals ?? []) arrivals.push({ at, occurredAt });
  });
  const port = await new Promise<number>((resolve) =>
    child.on('message', (message: { port?: number }) => {
      if (message.port) resolve(message.port);
    }),
  );
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    arrivals,
    setDelay: (ms: number) => {
      child.send({ delayMs: ms });
    },
    /** The receiver's CPU time so far (user and system), in ms. */
    cpuMs: () =>
      new Promise<number>((resolve) => {
        const answer = (message: { cpuMs?: number }) => {
          if (message.cpuMs === undefined) return;
          child.off('message', answer);
          resolve(message.cpuMs);
        };
        child.on('message', answer);
        child.send({ cpu: true });
      }),
    close: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill();
      }),
  };
}

export interface WebhookFigures {
  /** Deliveries a second of a backlog, to a receiver answering at once and to one taking 50 ms. */
  fastPerSecond: number;
  slowPerSecond: number;
  backlog: { fast: number; slow: number };
  /** From a change's commit to its arrival, while POST /Users runs at full speed with an endpoint. */
  latencyP50Ms: number;
  latencyP99Ms: number;
  /** POST /Users with one subscribed endpoint, and with none, in the same process, three times in turn. */
  withEndpoint: Row[];
  withoutEndpoint: Row[];
  /** In each turn with an endpoint, the receiver's CPU time a POST (ms): what another host would spend. */
  receiverMsPerPost: number[];
  /**
   * What one bare HTTP exchange with the receiver costs the whole machine (ms of CPU): a signed
   * delivery-sized POST from this process, kept-alive connections, nothing else. A delivery costs at
   * least that on top of its POST.
   */
  bareExchangeMachineMs: number;
}

const admin = async (server: Server, token: string, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${server.origin}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? undefined : ((await res.json()) as { id: string });
};

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0;
};

/** How long the bare HTTP exchanges are sent, as fast as they go. */
const BARE_SECONDS = 5;
/** The connections the dispatcher sends over to one endpoint (WEBHOOK_CONCURRENCY's default). */
const DISPATCHER_CONNECTIONS = 16;

/**
 * The bare HTTP exchange a delivery needs, measured apart: this process sends a user.created-sized
 * body, signed as scimd signs it, to the receiver over as many kept-alive connections as the
 * dispatcher uses (DISPATCHER_CONNECTIONS), for BARE_SECONDS; the whole machine's CPU a request.
 */
async function bareExchange(url: string): Promise<number> {
  const agent = new Agent({ connections: DISPATCHER_CONNECTIONS });
  const secret = generateWebhookSecret();
  const send = async () => {
    const id = `whd_${randomUUID()}`;
    const body = JSON.stringify({
      id,
      type: 'user.created',
      timestamp: new Date().toISOString(),
      data: { id: randomUUID(), ...userAttributes(1, 'bare@example.com') },
    });
    const answer = await request(url, {
      method: 'POST',
      body,
      headers: deliveryHeaders(secret, { id, type: 'user.created' }, body),
      dispatcher: agent,
    });
    await answer.body.dump();
  };
  try {
    for (let n = 0; n < 2000; n++) await send(); // warm-up
    const before = machineCpuSeconds();
    const until = Date.now() + BARE_SECONDS * 1000;
    let sent = 0;
    await Promise.all(
      Array.from({ length: DISPATCHER_CONNECTIONS }, async () => {
        while (Date.now() < until) {
          await send();
          sent++;
        }
      }),
    );
    return perRequestMs(machineCpuSeconds() - before, sent);
  } finally {
    await agent.close();
  }
}

/** Waits until deliveries stop arriving for 2 s; how many came, and their rate from `startedAt`. */
async function drain(
  arrivals: Arrival[],
  from: number,
  startedAt: number,
): Promise<{ count: number; rate: number }> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    await new Promise((r) => setTimeout(r, 100));
    const last = arrivals.at(-1)?.at ?? 0;
    if (Date.now() > deadline || (arrivals.length > from && Date.now() - last > 2000)) break;
  }
  const count = arrivals.length - from;
  const last = arrivals.at(-1)?.at ?? Date.now();
  return { count, rate: Math.round((count * 1000) / Math.max(1, last - startedAt)) };
}

/**
 * In one scimd process (started with WEBHOOKS_ALLOW_PRIVATE): POST /Users with no endpoint and with
 * one, three times each in turn; the commit-to-arrival latency of those deliveries; then a backlog of
 * changes held by an inactive endpoint, sent to a fast receiver and then to a slow one.
 */
export async function measureWebhooks(
  server: Server,
  adminToken: string,
  seeded: Seeded,
  post: Setup,
  patch: Setup,
): Promise<WebhookFigures> {
  const hooks = await receiver();
  const writes = `/scim/v2/${seeded.scratch.orgId}`;
  const withoutEndpoint: Row[] = [];
  const withEndpoint: Row[] = [];
  const receiverMsPerPost: number[] = [];
  let latencies: number[] = [];
  try {
    await warmUp(server, seeded.scratch.token, post, CREATE);
    for (let turn = 0; turn < 3; turn++) {
      withoutEndpoint.push(
        await load('POST /Users, no webhook endpoint', server, seeded.scratch.token, post, { base: writes }),
      );
      const endpoint = await admin(server, adminToken, 'POST', '/webhooks', {
        url: hooks.url,
        events: ['user.created'],
        orgId: seeded.scratch.orgId,
      });
      const from = hooks.arrivals.length;
      const receiverBefore = await hooks.cpuMs();
      withEndpoint.push(
        await load('POST /Users, one webhook endpoint', server, seeded.scratch.token, post, { base: writes }),
      );
      const posts = withEndpoint.at(-1)!.requestsPerSecond * DURATION;
      receiverMsPerPost.push(perRequestMs(((await hooks.cpuMs()) - receiverBefore) / 1000, posts));
      // Every delivery of the load arrives before the next turn.
      const expected = withEndpoint.at(-1)!.requestsPerSecond * 0.9;
      const deadline = Date.now() + 60_000;
      while (hooks.arrivals.length - from < expected && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 1000));
      latencies = latencies.concat(hooks.arrivals.slice(from).map((a) => a.at - a.occurredAt));
      await admin(server, adminToken, 'DELETE', `/webhooks/${endpoint!.id}`);
    }

    // A backlog: an inactive endpoint holds the changes of a few seconds of PATCHes, then sends them.
    const backlog = async (delayMs: number, seconds: number) => {
      hooks.setDelay(delayMs);
      const endpoint = await admin(server, adminToken, 'POST', '/webhooks', {
        url: hooks.url,
        events: ['user.deactivated', 'user.reactivated'],
        orgId: seeded.orgId,
      });
      await admin(server, adminToken, 'PATCH', `/webhooks/${endpoint!.id}`, { active: false });
      await load(`PATCH for a webhook backlog (${seconds} s)`, server, seeded.token, patch, { seconds });
      const from = hooks.arrivals.length;
      const startedAt = Date.now();
      await admin(server, adminToken, 'PATCH', `/webhooks/${endpoint!.id}`, { active: true });
      const drained = await drain(hooks.arrivals, from, startedAt);
      await admin(server, adminToken, 'DELETE', `/webhooks/${endpoint!.id}`);
      return drained;
    };
    const fast = await backlog(0, 5);
    const slow = await backlog(50, 2);
    hooks.setDelay(0);
    const bareExchangeMachineMs = await bareExchange(hooks.url);
    const figures: WebhookFigures = {
      fastPerSecond: fast.rate,
      slowPerSecond: slow.rate,
      backlog: { fast: fast.count, slow: slow.count },
      latencyP50Ms: quantile(latencies, 0.5),
      latencyP99Ms: quantile(latencies, 0.99),
      withEndpoint,
      withoutEndpoint,
      receiverMsPerPost,
      bareExchangeMachineMs,
    };
    console.log(
      `webhooks: ${figures.fastPerSecond} deliveries/s (receiver answering at once, ${fast.count} queued), ${figures.slowPerSecond}/s (50 ms receiver, ${slow.count} queued); commit to arrival p50 ${figures.latencyP50Ms} ms, p99 ${figures.latencyP99Ms} ms; a bare HTTP exchange with the receiver ${bareExchangeMachineMs} ms of machine CPU`,
    );
    return figures;
  } finally {
    await hooks.close();
  }
}
