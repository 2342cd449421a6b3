import { describe, expect, it } from 'vitest';
import {
  databaseFailure,
  isStatementTimeout,
  isUnstorableTextError,
  PoolWaitTimeoutError,
} from '../../src/db/failures.js';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('databaseFailure', () => {
  it.each([
    ['a refused connection', withCode('ECONNREFUSED'), 'unavailable'],
    ['a reset connection', withCode('ECONNRESET'), 'unavailable'],
    [
      'pg_terminate_backend (57P01)',
      withCode('57P01', 'terminating connection due to administrator command'),
      'unavailable',
    ],
    ['the server starting up (57P03)', withCode('57P03'), 'unavailable'],
    ['a connection exception (08006)', withCode('08006'), 'unavailable'],
    ['too many connections (53300)', withCode('53300'), 'unavailable'],
    ['a named statement through a transaction pooler (42P05)', withCode('42P05'), 'unavailable'],
    ["pg's lost connection", new Error('Connection terminated unexpectedly'), 'unavailable'],
    ["pg-pool's connect timeout", new Error('timeout exceeded when trying to connect'), 'unavailable'],
    [
      'a broken client',
      new Error('Client has encountered a connection error and is not queryable'),
      'unavailable',
    ],
    [
      'every address refused',
      new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')]),
      'unavailable',
    ],
    [
      'the statement time limit (57014)',
      withCode('57014', 'canceling statement due to statement timeout'),
      'timeout',
    ],
    ['a lock wait past lock_timeout (55P03)', withCode('55P03'), 'timeout'],
    ['no connection free in time', new PoolWaitTimeoutError(5000), 'busy'],
    ['a serialization failure (40001)', withCode('40001'), 'conflict'],
    ['a deadlock (40P01)', withCode('40P01'), 'conflict'],
  ])('%s is %s', (_, error, kind) => {
    const failure = databaseFailure(error);
    expect(failure?.kind).toBe(kind);
    expect(failure?.retryAfterSeconds).toBeGreaterThan(0);
    expect(failure?.detail).toMatch(/retry/i);
  });

  it.each([
    ['a unique violation (23505)', withCode('23505')],
    ['a syntax error (42601)', withCode('42601')],
    ['a value out of range (22003)', withCode('22003')],
    ['a plain bug', new TypeError('cannot read properties of undefined')],
    ['not an error', 'text'],
    ['nothing', undefined],
  ])('%s is not a database failure: it stays a 500 or its own error', (_, error) => {
    expect(databaseFailure(error)).toBeUndefined();
  });

  it('tells a statement that ran out of time from the other failures', () => {
    expect(isStatementTimeout(withCode('57014'))).toBe(true);
    expect(isStatementTimeout(withCode('57P01'))).toBe(false);
    expect(isStatementTimeout(new PoolWaitTimeoutError(1))).toBe(false);
  });
});

describe('isUnstorableTextError', () => {
  it('tells text no column can hold (the client’s error) from failures and bugs', () => {
    expect(isUnstorableTextError(Object.assign(new Error('invalid byte sequence'), { code: '22021' }))).toBe(
      true,
    );
    expect(isUnstorableTextError(Object.assign(new Error('untranslatable'), { code: '22P05' }))).toBe(true);
    expect(isUnstorableTextError(Object.assign(new Error('syntax'), { code: '42601' }))).toBe(false);
    expect(isUnstorableTextError(null)).toBe(false);
    expect(databaseFailure(Object.assign(new Error('x'), { code: '22021' }))).toBeUndefined();
  });
});
