// The log output (src/log.ts): lines logged in one turn of the event loop leave in one write, in
// order, before the next turn; none is lost when the process exits, even on an uncaught exception.
import { describe, expect, it } from 'vitest';
import { createLogger, TurnBufferedOutput } from '../../src/log.js';
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
