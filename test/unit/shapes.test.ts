// Query shapes (src/db/shapes.ts): built once per key, values filled per call, never a stale value.
import { describe, expect, it } from 'vitest';
import {
  Bindings,
  fill,
  MAX_SHAPES,
  prefixed,
  QueryShapes,
  Slot,
  slot,
  slots,
  twoRows,
} from '../../src/db/shapes.js';
import { compileOnly } from '../helpers/compile-only.js';

const db = compileOnly;

const byName = () =>
  db.selectFrom('users').select('id').where('org_id', '=', slot('org')).where('user_name', '=', slot('name'));

describe('QueryShapes', () => {
  it('builds a shape once and fills each call with its own values', () => {
    const shapes = new QueryShapes();
    let builds = 0;
    const build = () => {
      builds++;
      return byName();
    };
    const a = shapes.compile('by name', { org: 'o1', name: 'ana' }, build);
    const b = shapes.compile('by name', { org: 'o2', name: 'bo' }, build);
    expect(builds).toBe(1);
    expect(b.sql).toBe(a.sql);
    expect(a.parameters).toEqual(['o1', 'ana']);
    expect(b.parameters).toEqual(['o2', 'bo']);
  });

  it('never caches a query that holds a value outside a slot', () => {
    const shapes = new QueryShapes();
    let builds = 0;
    const build = (name: string) => () => {
      builds++;
      return db
        .selectFrom('users')
        .select('id')
        .where('org_id', '=', slot('org'))
        .where('user_name', '=', name);
    };
    expect(shapes.compile('baked', { org: 'o' }, build('ana')).parameters).toEqual(['o', 'ana']);
    expect(shapes.compile('baked', { org: 'o' }, build('bo')).parameters).toEqual(['o', 'bo']);
    expect(builds).toBe(2);
  });

  it('in verify mode, fails a hit whose fresh build compiles differently (a key that misses something)', () => {
    const shapes = new QueryShapes(true);
    shapes.compile('too coarse', { org: 'o', name: 'x' }, byName);
    expect(() =>
      shapes.compile('too coarse', { org: 'o', name: 'x' }, () =>
        db.selectFrom('users').select('id').where('org_id', '=', slot('org')),
      ),
    ).toThrow(/compiled differently/);
  });

  it(`stops remembering new shapes after ${MAX_SHAPES}, and still answers them`, () => {
    const shapes = new QueryShapes();
    for (let i = 0; i < MAX_SHAPES; i++) shapes.compile(`shape ${i}`, { org: 'o', name: 'n' }, byName);
    expect(shapes.size).toBe(MAX_SHAPES);
    let builds = 0;
    const build = () => {
      builds++;
      return byName();
    };
    expect(shapes.compile('one more', { org: 'o', name: 'n' }, build).parameters).toEqual(['o', 'n']);
    shapes.compile('one more', { org: 'o', name: 'n' }, build);
    expect(builds).toBe(2);
    expect(shapes.size).toBe(MAX_SHAPES);
  });
});

describe('slots', () => {
  it('names a row’s slots by its columns, and binds values under fresh names', () => {
    const row = { user_name: 'ana', active: true };
    const compiled = db
      .insertInto('users')
      .values(slots(row) as never)
      .compile();
    expect(fill(compiled, row).parameters).toEqual(['ana', true]);
    const bindings = new Bindings('f');
    expect([bindings.bind('a'), bindings.bind(2)].map((s) => s.name)).toEqual(['f0', 'f1']);
    expect(bindings.values).toEqual({ f0: 'a', f1: 2 });
  });

  it('fills a statement that writes two rows, the second under a prefix', () => {
    const row = { user_name: 'ana', active: true };
    const audit = { user_name: 'audited', status: 201 };
    const compiled = db
      .with('a', (w) => w.insertInto('users').values(slots(row) as never))
      .insertInto('audit_events')
      .values(slots(audit, 'audit.') as never)
      .compile();
    expect(fill(compiled, twoRows(row, audit, 'audit.')).parameters).toEqual(['ana', true, 'audited', 201]);
    expect(prefixed(audit, 'x.')).toEqual({ 'x.user_name': 'audited', 'x.status': 201 });
    expect(prefixed(audit, 'x.')).toEqual({ 'x.user_name': 'audited', 'x.status': 201 });
  });

  it('refuses a slot without a value, and a slot that reaches the driver unfilled', () => {
    expect(() => fill(byName().compile(), { org: 'o' })).toThrow(/no value for query slot name/);
    expect(() => new Slot('name').toPostgres()).toThrow(/sent unfilled/);
  });
});
