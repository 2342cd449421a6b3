// The HTTP side of a delivery, against a real receiver on loopback: the address actually connected to
// is checked (a DNS answer cannot send a delivery inside the network), and every failure is worded
// for the delivery log.
import type { lookup as dnsLookup } from 'node:dns';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { publicOnly, refusedUrl } from '../../src/webhooks/address.js';
import { Sender } from '../../src/webhooks/sender.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';

/** A resolver that answers `address` for every name, as a hostile or mistaken DNS server might. */
const resolvingTo = (address: string): typeof dnsLookup =>
  ((
    _hostname: string,
    _options: unknown,
    callback: (e: null, a: { address: string; family: number }[]) => void,
  ) => callback(null, [{ address, family: 4 }])) as typeof dnsLookup;

describe('the delivery sender', () => {
  let receiver: Receiver | undefined;
  let sender: Sender | undefined;
  afterEach(async () => {
    await sender?.close();
    await receiver?.close();
    sender = receiver = undefined;
  });

  it('refuses to connect when a public-looking name resolves to an internal address', async () => {
    receiver = await startReceiver();
    const port = new URL(receiver.url).port;
    sender = new Sender({
      timeoutMs: 2000,
      allowPrivate: false,
      connections: 1,
      lookup: publicOnly(resolvingTo('127.0.0.1')),
    });
    const sent = await sender.send(`https://hooks.example.com:${port}/in`, '{}', {});
    expect(sent.status).toBeUndefined();
    expect(sent.error).toMatch(
      /EADDRNOTALLOWED: hooks\.example\.com resolves to an internal address \(127\.0\.0\.1\)/,
    );
    expect(receiver.received).toHaveLength(0);
  });

  it('lets a public answer through the lookup', async () => {
    const lookup = publicOnly(resolvingTo('203.0.113.7'));
    const answer = await new Promise((resolve) =>
      lookup('hooks.example.com', {}, (error, address, family) => resolve({ error, address, family })),
    );
    expect(answer).toEqual({ error: null, address: '203.0.113.7', family: 4 });
  });

  it('refuses a DNS answer that is an IPv6 form of an internal address', async () => {
    for (const address of ['::ffff:0:7f00:1', '64:ff9b::a00:1', '2002:c0a8:101::1', 'fec0::1']) {
      const lookup = publicOnly(resolvingTo(address));
      const error = await new Promise((resolve) => lookup('hooks.example.com', {}, (e) => resolve(e)));
      expect(error, address).toMatchObject({ code: 'EADDRNOTALLOWED' });
    }
  });

  it('tells public addresses from internal ones, in both families', () => {
    const publicHosts = [
      '8.8.8.8',
      '203.0.113.7',
      '[2001:4860:4860::8888]',
      '[2606:4700:4700::1111]',
      // Forms that carry a public IPv4 address: IPv4-mapped, NAT64's well-known prefix, 6to4.
      '[::ffff:8.8.8.8]',
      '[64:ff9b::808:808]',
      '[2002:808:808::1]',
      'hooks.example.com',
    ];
    const internalHosts = [
      '10.1.2.3',
      '127.0.0.1',
      '169.254.169.254',
      '172.16.0.1',
      '192.168.1.1',
      '100.64.0.1',
      '0.0.0.0',
      '[::1]',
      '[fe80::1]',
      '[fd00::1]',
      '[::ffff:127.0.0.1]',
      '[::ffff:7f00:1]',
      // Forms that embed or reach an internal address, and everything outside global unicast.
      '[::127.0.0.1]',
      '[::ffff:0:7f00:1]',
      '[2002:7f00:1::]',
      '[2002:a00:1::1]',
      '[64:ff9b::7f00:1]',
      '[64:ff9b::a9fe:a9fe]',
      '[64:ff9b:1::808:808]',
      '[fec0::1]',
      '[100::1]',
      '[::]',
      '[ff02::1]',
      '[2001::1]',
      '[2001:0:4136:e378:8000:63bf:3fff:fdd2]',
      'localhost',
      'api.localhost',
    ];
    for (const host of publicHosts) expect(refusedUrl(`https://${host}/in`, false), host).toBeUndefined();
    for (const host of internalHosts)
      expect(refusedUrl(`https://${host}/in`, false), host).toBe(
        'must not name a loopback, private or link-local address (WEBHOOKS_ALLOW_PRIVATE=true lifts this, for development and tests only)',
      );
  });

  it('refuses a URL that is not https, or names loopback, before any connection', async () => {
    sender = new Sender({ timeoutMs: 2000, allowPrivate: false, connections: 1 });
    expect((await sender.send('http://hooks.example.com/in', '{}', {})).error).toBe(
      'the URL must be https (WEBHOOKS_ALLOW_PRIVATE=true lifts this, for development and tests only)',
    );
    expect((await sender.send('https://127.0.0.1/in', '{}', {})).error).toBe(
      'the URL must not name a loopback, private or link-local address (WEBHOOKS_ALLOW_PRIVATE=true lifts this, for development and tests only)',
    );
  });

  it('reports the status, Retry-After, a timeout and a refused connection', async () => {
    receiver = await startReceiver();
    sender = new Sender({ timeoutMs: 300, allowPrivate: true, connections: 2 });
    receiver.answer = () => ({ status: 429, headers: { 'retry-after': '7' } });
    const limited = await sender.send(receiver.url, '{"a":1}', { 'content-type': 'application/json' });
    expect(limited).toMatchObject({ status: 429, retryAfterMs: 7000 });
    expect(receiver.received[0]!.rawBody).toBe('{"a":1}');

    receiver.answer = () => ({ status: 200, delayMs: 1000 });
    const slow = await sender.send(receiver.url, '{}', {});
    expect(slow).toMatchObject({ error: 'no answer within 300 ms' });
    expect(slow.latencyMs).toBeGreaterThanOrEqual(250);

    // A port nobody listens on: take one, and close it.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    const refused = await sender.send(`http://127.0.0.1:${port}/in`, '{}', {});
    expect(refused.status).toBeUndefined();
    expect(refused.error).toMatch(/^ECONNREFUSED/);
  });
});
