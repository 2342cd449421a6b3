// The log (src/log.ts): pino's JSON lines with credentials censored, written asynchronously to
// standard output, and nothing pending lost when the process exits, even on an uncaught exception.
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { runModule } from '../helpers/child-module.js';

describe('createLogger', () => {
  it('censors the Authorization header and token fields', () => {
    const writes: string[] = [];
    const logger = createLogger('info', { write: (text: string) => writes.push(text) });
    logger.info(
      { req: { headers: { authorization: 'Bearer scimd_secret' } }, token: 'scimd_secret' },
      'line',
    );
    const line = JSON.parse(writes[0]!);
    expect(line.req.headers.authorization).toBe('[redacted]');
    expect(line.token).toBe('[redacted]');
    expect(writes.join('')).not.toContain('scimd_secret');
  });

  it.each([
    ['exits', 'process.exit(0)'],
    ['throws an uncaught exception', "throw new Error('boom')"],
  ])('writes what is pending to standard output when the process %s', (_, ending) => {
    const child = runModule(
      `const { createLogger } = await import('./src/log.ts');
       const logger = createLogger('info');
       for (let i = 0; i < 1000; i++) logger.info({ i }, 'line');
       ${ending};`,
    );
    const lines = child.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).i);
    expect(lines).toEqual(Array.from({ length: 1000 }, (_, i) => i));
  });
});
