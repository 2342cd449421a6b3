// Each statement scimd sends is declared once. It is built with Kysely against a database that never
// connects (Kysely's "splitting query building and execution" recipe), with named parameters where
// the values go, and run as often as needed with each call's values. Building and compiling a query
// costs more CPU than Postgres spends answering a lookup; a declared statement pays it once.
import {
  type Compilable,
  CompiledQuery,
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  type RawBuilder,
  sql,
} from 'kysely';
import { LRUCache } from 'lru-cache';
import type { DB } from './tables.js';

/** Where a statement takes a value: filled, by name, from the values of each run. */
class Parameter {
  constructor(readonly name: string) {}
}

/** A named parameter, typed as the value it stands for so that Kysely's builders accept it. */
export function param<T = string>(name: string): T {
  return new Parameter(name) as unknown as T;
}

/**
 * A named parameter that Postgres does not see when it plans: its value comes from an InitPlan, so
 * every call's plan is estimated alike and the statement keeps one generic plan. Where the estimate
 * would depend on the value (how many rows an organization has), the plan made for each call's value
 * looks cheaper than the generic one, and Postgres plans the statement again on every call.
 */
export function unestimatedParam<T = string>(name: string, type: 'uuid'): RawBuilder<T> {
  return sql<T>`(select ${param(name)}::${sql.raw(type)})`;
}

/** Builds SQL for Postgres and runs nothing. */
const builder = new Kysely<DB>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

export type Values = Readonly<Record<string, unknown>>;

export class Statement<R> {
  readonly sql: string;
  /** The parameter name of each placeholder, $1 first. */
  readonly #names: readonly string[];

  constructor(query: Compilable<R>) {
    const compiled = query.compile();
    this.sql = compiled.sql;
    this.#names = compiled.parameters.map((p) => {
      // A value built into the statement would be sent with every run, whatever that run's values.
      if (!(p instanceof Parameter))
        throw new Error(`a statement takes values through param() only: ${this.sql}`);
      return p.name;
    });
  }

  /** The statement with this call's values in place, as Kysely executes it. */
  bind(values: Values): CompiledQuery<R> {
    const parameters = this.#names.map((name) => {
      if (!(name in values)) throw new Error(`no value for the parameter ${name} of: ${this.sql}`);
      return values[name];
    });
    return CompiledQuery.raw(this.sql, parameters) as CompiledQuery<R>;
  }

  /** Runs the statement on `db` (a database or a transaction) with this call's values. */
  run(db: Kysely<DB>, values: Values): Promise<QueryResult<R>> {
    return db.executeQuery(this.bind(values));
  }
}

/** A statement declared once, where it is used: `const findUser = statement((db) => db.selectFrom…)`. */
export function statement<R>(build: (db: Kysely<DB>) => Compilable<R>): Statement<R> {
  return new Statement(build(builder));
}

/**
 * Statements whose SQL varies with the request (a list query with its filter and order), each built
 * once per key. The key must name everything the SQL depends on; the caller derives it from the data
 * the SQL is built from (see filter/plan.ts).
 */
export class StatementCache {
  readonly #statements = new LRUCache<string, Statement<unknown>>({ max: 1000 });

  get<R>(key: string, build: (db: Kysely<DB>) => Compilable<R>): Statement<R> {
    let found = this.#statements.get(key) as Statement<R> | undefined;
    if (!found) {
      found = statement(build);
      this.#statements.set(key, found as Statement<unknown>);
    }
    return found;
  }
}
