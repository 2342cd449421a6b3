// The log output (src/log.ts): lines logged in one turn of the event loop leave in one write, in
// order, before the next turn; none is lost when the process exits, even on an uncaught exception.
// The request line, written without pino's formatting, is the line pino would write.
import { describe, expect, it } from 'vitest';
import { createLogger, requestLineWriter, TurnBufferedOutput } from '../../src/log.js';
import { runModule } from '../helpers/child-module.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('TurnBufferedOutput', () => {
  it('writes the lines of one turn together, in order, before the next turn', async () => {
    const writes: string[] = [];
    const output = new TurnBufferedOutput({ write: (text) => writes.push(text) });
    output.write('a\n');
    output.write('b\n');
    expect(writes).toEqual([]);
    await nextTurn();
    expect(writes).toEqual(['a\nb\n']);
    output.write('c\n');
    await nextTurn();
    expect(writes).toEqual(['a\nb\n', 'c\n']);
    output.flush();
    expect(writes).toHaveLength(2);
  });

  it('carries pino lines unchanged', async () => {
    const writes: string[] = [];
    const logger = createLogger('info', new TurnBufferedOutput({ write: (text) => writes.push(text) }));
    logger.info({ n: 1 }, 'first');
    logger.info({ n: 2, token: 'scimd_secret' }, 'second');
    await nextTurn();
    const lines = writes
      .join('')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.map((l) => [l.msg, l.n])).toEqual([
      ['first', 1],
      ['second', 2],
    ]);
    expect(lines[1].token).toBe('[redacted]');
  });

  it.each([
    ['exits', 'process.exit(0)'],
    ['throws an uncaught exception', "throw new Error('boom')"],
  ])('writes what is pending when the process %s', (_, ending) => {
    const child = runModule(
      `const { createLogger } = await import('./src/log.ts');
       const logger = createLogger('info');
       logger.info('one'); logger.info('two');
       ${ending};`,
    );
    const messages = child.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).msg);
    expect(messages).toEqual(['one', 'two']);
  });
});

describe('requestLineWriter', () => {
  const capture = (level: string) => {
    const writes: string[] = [];
    const logger = createLogger(level, { write: (text: string) => writes.push(text) } as never);
    return { logger, lines: () => writes.join('').split('\n').filter(Boolean) };
  };

  it.each([
    ['an ordinary request', '/scim/v2/6f1c4a67-43fe-4000-9bfb-682c30396620/Users', 'GET', 200, 3.1],
    ['a path needing escapes', '/scim/v2/x/Users/"quoted"\\back\u0001ctl/é/\u2028', 'PATCH', 404, 0],
    ['a long path', `/scim/v2/${'a'.repeat(5000)}`, 'DELETE', 500, 1234.5],
  ])('writes %s exactly as pino would, key for key', (_, path, method, status, ms) => {
    const { logger, lines } = capture('info');
    const fields = { requestId: 'req-1.a:b', method, path, status, ms };
    const before = Date.now();
    requestLineWriter(logger)(fields);
    logger.info(fields, 'request');
    const [ours, pinos] = lines();
    const mine = JSON.parse(ours!);
    const theirs = JSON.parse(pinos!);
    expect(Object.keys(mine)).toEqual(Object.keys(theirs));
    expect({ ...mine, time: 0 }).toEqual({ ...theirs, time: 0 });
    expect(mine).toMatchObject({ level: 30, path, method, status, ms, msg: 'request', pid: process.pid });
    expect(mine.time).toBeGreaterThanOrEqual(before);
    expect(mine.time).toBeLessThanOrEqual(theirs.time);
  });

  it('writes nothing when the level leaves info out, and follows a level changed later', () => {
    const { logger, lines } = capture('warn');
    const write = requestLineWriter(logger);
    const fields = { requestId: 'r', method: 'GET', path: '/', status: 200, ms: 1 };
    write(fields);
    expect(lines()).toEqual([]);
    logger.level = 'info';
    write(fields);
    expect(lines()).toHaveLength(1);
  });
});
