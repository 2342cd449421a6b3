// The bench's webhook receiver, in a process of its own (as a receiver runs beside, not inside, the
// client that loads scimd): answers 200 after the delay its parent sets, and tells its parent when
// each delivery arrived and when its change happened, in batches over IPC, and its CPU time when asked.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** [arrived at, change occurred at], in ms since the epoch. */
let pending: [number, number][] = [];
let delayMs = 0;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = Date.now();
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { timestamp: string };
    pending.push([at, Date.parse(body.timestamp)]);
    if (delayMs === 0) res.writeHead(200).end();
    else setTimeout(() => res.writeHead(200).end(), delayMs);
  });
});

process.on('message', (message: { delayMs?: number; cpu?: true }) => {
  if (message.delayMs !== undefined) delayMs = message.delayMs;
  if (message.cpu) {
    const { user, system } = process.cpuUsage();
    process.send!({ cpuMs: (user + system) / 1000 });
  }
});
setInterval(() => {
  if (pending.length === 0) return;
  process.send!({ arrivals: pending });
  pending = [];
}, 50);
process.on('disconnect', () => process.exit(0));
server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
