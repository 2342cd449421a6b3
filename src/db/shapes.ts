// Queries compiled once per shape. Building a query with Kysely's immutable builders and compiling it
// costs scimd more CPU than Postgres spends answering a userName lookup (bench: about a quarter of the
// server's time per lookup). A shape is a query whose SQL text depends only on its key; the values that
// change from one request to the next enter it as slots, named placeholders that each call fills in.
//
// Safety: a compiled query is cached only when every parameter in it is a slot, so a value built into
// a query without a slot costs speed (it is compiled each time), never a stale answer. What the key
// must name (everything the builder reads that is not a slot) is the caller's responsibility; with
// SCIMD_VERIFY_QUERY_SHAPES=1 (the test suite sets it) every cache hit is also built afresh and
// compared, so a key that misses something fails the tests that exercise it.
//
// The cache is process-wide: every Kysely instance here compiles with the Postgres dialect and no
// plugins, and a transaction compiles exactly as its database does.
import type { Compilable, CompiledQuery } from 'kysely';

/** A named placeholder for a value, filled in when a cached query runs. */
export class Slot {
  constructor(readonly name: string) {}

  /** pg calls this for a parameter object: a slot that reaches it was never filled. */
  toPostgres(): never {
    throw new Error(`query slot ${this.name} was sent unfilled`);
  }
}

/** A slot, typed as the value it stands for so that builders accept it. */
export function slot<T = string>(name: string): T {
  return new Slot(name) as unknown as T;
}

export type SlotValues = Readonly<Record<string, unknown>>;

/**
 * A slot for each value of a row to write, named by its column (after `prefix`, when one statement
 * writes two rows): `values(slots(row))` in a builder, filled from `prefixed(row, prefix)`.
 */
export function slots<T extends SlotValues>(row: T, prefix = ''): T {
  const named: Record<string, unknown> = {};
  for (const name of Object.keys(row)) named[name] = new Slot(`${prefix}${name}`);
  return named as T;
}

/** Each prefix's slot names by column name, made once: a fresh string per request is a new key. */
const prefixedNames = new Map<string, Map<string, string>>();

/** The row's values under the slot names `slots(row, prefix)` gave them. */
export function prefixed(row: SlotValues, prefix: string): Record<string, unknown> {
  let names = prefixedNames.get(prefix);
  if (!names) {
    names = new Map();
    prefixedNames.set(prefix, names);
  }
  const values: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(row)) {
    let slotName = names.get(name);
    if (slotName === undefined) {
      slotName = `${prefix}${name}`;
      names.set(name, slotName);
    }
    values[slotName] = value;
  }
  return values;
}

/**
 * The values of one statement that writes two rows: `row` under its own slot names (`slots(row)`)
 * and `other` under `prefix` (`slots(other, prefix)`). Built up from an empty object: V8 adds
 * properties to one along hidden classes it has made before, but a spread copy
 * (`{ ...row, ...prefixed(other) }`) got new ones on every call. For a user and its audit entry, in a
 * loop: 12-15 µs that way, about 1 µs this way.
 */
export function twoRows(row: SlotValues, other: SlotValues, prefix: string): SlotValues {
  return Object.assign(prefixed(other, prefix), row);
}

/** Values bound as they are met, each under a fresh name `${prefix}${n}` (a filter's comparison values). */
export class Bindings {
  readonly values: Record<string, unknown> = {};
  private count = 0;

  constructor(private readonly prefix: string) {}

  bind(value: unknown): Slot {
    const name = `${this.prefix}${this.count++}`;
    this.values[name] = value;
    return new Slot(name);
  }
}

/** The query with each slot replaced by its value. */
export function fill<R>(query: CompiledQuery<R>, values: SlotValues): CompiledQuery<R> {
  const parameters = query.parameters.map((p) => {
    if (!(p instanceof Slot)) return p;
    if (!(p.name in values)) throw new Error(`no value for query slot ${p.name}`);
    return values[p.name];
  });
  return { ...query, parameters };
}

/** Distinct shapes kept; past this, a new shape is compiled on every call (as without the cache). */
export const MAX_SHAPES = 1000;

export class QueryShapes {
  /** null: the shape holds a value that is not a slot, and is compiled each time. */
  private readonly compiled = new Map<string, CompiledQuery | null>();

  constructor(private readonly verify = false) {}

  get size(): number {
    return this.compiled.size;
  }

  /** The query of shape `key` with `values` in its slots, built by `build` only when not yet known. */
  compile<R>(key: string, values: SlotValues, build: () => Compilable<R>): CompiledQuery<R> {
    const known = this.compiled.get(key) as CompiledQuery<R> | null | undefined;
    if (known) {
      if (this.verify) verifyShape(key, known, build().compile(), values);
      return fill(known, values);
    }
    const fresh = build().compile();
    if (known === undefined && this.compiled.size < MAX_SHAPES) {
      this.compiled.set(key, fresh.parameters.every((p) => p instanceof Slot) ? fresh : null);
    }
    return fill(fresh, values);
  }
}

function verifyShape(key: string, known: CompiledQuery, fresh: CompiledQuery, values: SlotValues): void {
  const a = fill(known, values);
  const b = fill(fresh, values);
  if (a.sql !== b.sql || JSON.stringify(a.parameters) !== JSON.stringify(b.parameters)) {
    throw new Error(`query shape ${JSON.stringify(key)} compiled differently:\n${a.sql}\n${b.sql}`);
  }
}

/** The shapes of this process (see the top of this file). */
export const shapes = new QueryShapes(process.env.SCIMD_VERIFY_QUERY_SHAPES === '1');
