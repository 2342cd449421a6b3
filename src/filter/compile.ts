// compile: a resolved filter → one SQL boolean expression over the resource's table, through the
// table's StorageMapping. Comparisons follow the schema: caseExact false compares lower() on both
// sides; ordering on text uses the "C" collation (code point order, the same on every Postgres).
//
// Compiling happens in two steps, because the second is the costly one and is rarely needed. The
// first walks the filter, decides everything that depends on its values (a uuid that cannot match, a
// constant comparison, a LIKE pattern) and binds each comparison value to a slot (db/shapes.ts); it
// also writes the condition's shape: a key naming everything its SQL depends on, slot names
// included. The second builds the SQL with Kysely, and runs only when a list query of that shape is
// compiled for the first time: one compiled query then serves every filter of the same shape
// (an IdP's `userName eq "…"` checks are all one shape). Kysely's builders freeze every node they
// make, which cost more than the rest of a lookup's filter work (bench: 3.4 of 5.3 µs in a loop).
import { type RawBuilder, type SqlBool, sql } from 'kysely';
import { isUuid } from '../db/ids.js';
import { Bindings, type Slot, type SlotValues } from '../db/shapes.js';
import { InvalidFilterError } from '../http/scim-errors.js';
import { derivedOnce, derivedOncePerName } from '../schema/registry.js';
import type { AttributeDef } from '../schema/types.js';
import type { CompareOp } from './ast.js';
import { compareValues } from './evaluate.js';
import type { AttributeTarget, Comparable, MultiValuedTarget, ResolvedFilter, Target } from './resolve.js';
import {
  type ColumnSpec,
  type ConstantSpec,
  isConstant,
  type SqlType,
  type StorageMapping,
} from './storage.js';

type Sql = RawBuilder<unknown>;

/**
 * A value the compiler can compare: an SQL expression of a known type, or a constant known here.
 * `key` names the expression within its storage mapping (part of a condition's shape).
 */
export type Scalar =
  | {
      readonly kind: 'sql';
      readonly key: string;
      readonly expr: Sql;
      readonly type: SqlType;
      readonly caseExact: boolean;
    }
  | { readonly kind: 'constant'; readonly value: string; readonly caseExact: boolean };

/**
 * A part of a condition: its shape, worked out with its values bound, and its SQL, built on demand.
 * Everything `sql` reads must be named by `key` (SCIMD_VERIFY_QUERY_SHAPES checks it in the tests).
 */
interface Part {
  readonly key: string;
  readonly sql: () => RawBuilder<SqlBool>;
}

const TRUE: Part = { key: 'true', sql: () => sql<SqlBool>`true` };
const FALSE: Part = { key: 'false', sql: () => sql<SqlBool>`false` };
const known = (value: boolean): Part => (value ? TRUE : FALSE);

/** Where element sub-attributes come from inside a value path. */
type ElementSource =
  | { readonly kind: 'json' }
  | { readonly kind: 'relation'; readonly subs: Record<string, ColumnSpec | ConstantSpec> };

const ELEMENT = sql.raw('e.v');

export function sqlTypeOf(attr: AttributeDef): SqlType {
  switch (attr.type) {
    case 'boolean':
      return 'boolean';
    case 'integer':
    case 'decimal':
      return 'numeric';
    case 'dateTime':
      return 'timestamptz';
    default:
      return 'text';
  }
}

/** A typed value read from a jsonb object. */
function jsonScalar(key: string, object: Sql, attr: AttributeDef): Scalar {
  const name = sql.lit(attr.name);
  const type = sqlTypeOf(attr);
  const expr =
    type === 'text'
      ? sql`(${object}->>${name})`
      : type === 'timestamptz'
        ? sql`(${object}->>${name})::timestamptz`
        : sql`(${object}->${name})::${sql.raw(type)}`;
  return { kind: 'sql', key: `${key}:${type}:${attr.caseExact}`, expr, type, caseExact: attr.caseExact };
}

function fromSpec(
  spec: ColumnSpec | ConstantSpec,
  attr: AttributeDef,
  qualify: (column: string) => string,
): Scalar {
  if (isConstant(spec)) return { kind: 'constant', value: spec.constant, caseExact: attr.caseExact };
  const column = qualify(spec.column);
  return {
    kind: 'sql',
    key: `${column}:${spec.type}:${attr.caseExact}`,
    expr: sql.ref(column),
    type: spec.type,
    caseExact: attr.caseExact,
  };
}

export function pathKey(target: {
  schema: string | undefined;
  extension: boolean;
  attribute: AttributeDef;
  sub?: AttributeDef;
}) {
  return `${target.extension ? `${target.schema}:` : ''}${target.attribute.name}${target.sub ? `.${target.sub.name}` : ''}`;
}

/**
 * Scalars do not depend on values, and Kysely's builders are immutable: each is built once per
 * storage mapping (attributes and relation elements) or per sub-attribute (elements read from jsonb).
 */
const storedScalar = derivedOncePerName<StorageMapping, Scalar>();
const jsonElementScalar = derivedOnce((sub: AttributeDef) => jsonScalar(`e.v:${sub.name}`, ELEMENT, sub));

/** Binds a comparison value: the slot the SQL holds in its place. */
type Bind = (value: unknown) => Slot;

export class FilterCompiler {
  private readonly bind: Bind;

  constructor(
    private readonly storage: StorageMapping,
    bindings = new Bindings('f'),
  ) {
    this.bind = (value) => bindings.bind(value);
  }

  private get data(): Sql {
    return sql.ref(`${this.storage.table}.${this.storage.data}`);
  }

  /** The jsonb object that holds an attribute: the data column, or the extension object in it. */
  private container(target: { schema: string | undefined; extension: boolean }): Sql {
    return target.extension ? sql`(${this.data}->${sql.lit(target.schema!)})` : this.data;
  }

  attributeScalar(target: AttributeTarget): Scalar {
    const path = pathKey(target);
    return storedScalar(this.storage, path, () => {
      const def = target.sub ?? target.attribute;
      const spec = this.storage.columns[path];
      if (spec) return fromSpec(spec, def, (c) => `${this.storage.table}.${c}`);
      if (target.schema === undefined) {
        throw new InvalidFilterError(`${path} cannot be used in a filter or sort`);
      }
      const holder = target.sub
        ? sql`(${this.container(target)}->${sql.lit(target.attribute.name)})`
        : this.container(target);
      return jsonScalar(`data:${path}`, holder, def);
    });
  }

  private elementScalar(sub: AttributeDef, source: ElementSource, owner: string): Scalar {
    if (source.kind === 'json') return jsonElementScalar(sub);
    const spec = source.subs[sub.name];
    if (!spec) throw new InvalidFilterError(`${owner}.${sub.name} cannot be used in a filter`);
    return storedScalar(this.storage, `${owner}[].${sub.name}`, () => fromSpec(spec, sub, (c) => c));
  }

  private scalar(target: Target, source: ElementSource | undefined, owner: string): Scalar {
    if (target.kind === 'attribute') return this.attributeScalar(target);
    return this.elementScalar(target.sub, source!, owner);
  }

  compile(filter: ResolvedFilter, source?: ElementSource, owner = ''): Part {
    switch (filter.kind) {
      case 'and':
      case 'or': {
        const parts = filter.filters.map((f) => this.compile(f, source, owner));
        const joiner = filter.kind === 'and' ? ' and ' : ' or ';
        return {
          key: `(${parts.map((p) => p.key).join(joiner)})`,
          sql: () =>
            sql<SqlBool>`(${sql.join(
              parts.map((p) => p.sql()),
              sql.raw(joiner),
            )})`,
        };
      }
      case 'not': {
        // Two-valued logic: a comparison on an absent attribute is false, so its negation is true.
        const inner = this.compile(filter.filter, source, owner);
        return { key: `not (${inner.key})`, sql: () => sql<SqlBool>`not coalesce(${inner.sql()}, false)` };
      }
      case 'compare':
        return compareScalar(this.scalar(filter.target, source, owner), filter.op, filter.value, this.bind);
      case 'present': {
        const target = filter.target;
        if (target.kind === 'multiValued') return this.anyElement(target);
        if (target.kind === 'attribute' && !target.sub && target.attribute.type === 'complex') {
          // A complex attribute kept in columns (meta) is present whenever one of its parts is.
          const prefix = `${pathKey(target)}.`;
          if (Object.keys(this.storage.columns).some((k) => k.startsWith(prefix))) return TRUE;
          const name = target.attribute.name;
          return {
            key: `${pathKey(target)} pr`,
            sql: () => sql<SqlBool>`(${this.container(target)}->${sql.lit(name)}) is not null`,
          };
        }
        return presentScalar(this.scalar(target, source, owner));
      }
      case 'valuePath':
        return this.anyElement(filter.target, filter.filter);
    }
  }

  /** True when some element of a multi-valued attribute satisfies `inner` (any element, when absent). */
  private anyElement(target: MultiValuedTarget, inner?: ResolvedFilter): Part {
    const name = target.attribute.name;
    const relation = target.extension ? undefined : this.storage.relations[name];
    if (relation) {
      const cond = inner ? this.compile(inner, { kind: 'relation', subs: relation.subs }, name) : TRUE;
      return {
        key: `any ${name}[] (${cond.key})`,
        sql: () =>
          sql<SqlBool>`exists (select 1 from ${relation.rows(this.storage.table)} and ${cond.sql()})`,
      };
    }
    const path = pathKey(target);
    const array = () => sql`(${this.container(target)}->${sql.lit(name)})`;
    const cond = inner ? this.compile(inner, { kind: 'json' }, name) : TRUE;
    const exists = () =>
      sql<SqlBool>`exists (select 1 from jsonb_array_elements(coalesce(${array()}, '[]'::jsonb)) as e(v) where ${cond.sql()})`;
    const probe =
      inner && !target.extension && this.storage.indexedValues.has(name) ? valueEquality(inner) : undefined;
    if (probe === undefined) return { key: `any ${path} (${cond.key})`, sql: exists };
    // The GIN index on scim_ci_values(data->'emails') finds candidates; EXISTS keeps the correlation.
    const slot = this.bind(probe);
    return {
      key: `any ${path} probe ${slot.name} (${cond.key})`,
      sql: () => sql<SqlBool>`(scim_ci_values(${array()}) @> array[lower(${slot})] and ${exists()})`,
    };
  }
}

/** The string an element filter requires its case-insensitive `value` to equal, when it does. */
function valueEquality(filter: ResolvedFilter): string | undefined {
  if (filter.kind === 'compare') {
    const isValue = filter.target.kind === 'element' && filter.target.sub.name === 'value';
    const caseInsensitive = filter.target.kind === 'element' && !filter.target.sub.caseExact;
    return isValue && caseInsensitive && filter.op === 'eq' && typeof filter.value === 'string'
      ? filter.value
      : undefined;
  }
  if (filter.kind === 'and') {
    for (const f of filter.filters) {
      const found = valueEquality(f);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** A comparison value bound to a slot, and the SQL type it is cast to (none for text). */
function param(value: Comparable, type: SqlType, bind: Bind): { slot: Slot; cast: SqlType | undefined } {
  if (value instanceof Date) return { slot: bind(value.toISOString()), cast: 'timestamptz' };
  if (type === 'text') return { slot: bind(String(value)), cast: undefined };
  return { slot: bind(value), cast: type };
}

function castSql(slot: Slot, cast: SqlType | undefined): Sql {
  return cast ? sql`${slot}::${sql.raw(cast)}` : sql`${slot}`;
}

const ORDER_OPS: Record<'gt' | 'ge' | 'lt' | 'le', string> = { gt: '>', ge: '>=', lt: '<', le: '<=' };

export function compareScalar(scalar: Scalar, op: CompareOp, value: Comparable, bind: Bind): Part {
  if (scalar.kind === 'constant') return known(compareValues(scalar.value, op, value, scalar.caseExact));
  let type = scalar.type;
  let asText = false;
  if (type === 'uuid') {
    if (op === 'eq' || op === 'ne') {
      // A value that is no uuid equals no id (and must not reach Postgres as a failed cast).
      // uuid equality ignores case; a caseExact attribute (id) must not.
      const matchable =
        typeof value === 'string' && isUuid(value) && (!scalar.caseExact || value === value.toLowerCase());
      if (matchable) {
        const slot = bind(value);
        return {
          key: `${scalar.key} ${op} ${slot.name}::uuid`,
          sql: () => sql<SqlBool>`${scalar.expr} ${sql.raw(op === 'eq' ? '=' : '<>')} ${slot}::uuid`,
        };
      }
      if (op === 'eq') return FALSE;
      return { key: `${scalar.key} is not null`, sql: () => sql<SqlBool>`${scalar.expr} is not null` };
    }
    asText = true;
    type = 'text';
  }
  const folded = type === 'text' && !scalar.caseExact;
  const left = () => {
    const expr = asText ? sql`${scalar.expr}::text` : scalar.expr;
    return folded ? sql`lower(${expr})` : expr;
  };
  const shape = `${scalar.key}${asText ? '::text' : ''}${folded ? ' folded' : ''} ${op}`;
  if (op === 'co' || op === 'sw' || op === 'ew') {
    const body = escapeLike(String(value));
    const slot = bind(op === 'co' ? `%${body}%` : op === 'sw' ? `${body}%` : `%${body}`);
    return {
      key: `${shape} ${slot.name}`,
      sql: () => {
        const pattern = folded ? sql`lower(${slot})` : sql`${slot}`;
        return sql<SqlBool>`${left()} like ${pattern} escape '\\'`;
      },
    };
  }
  const { slot, cast } = param(value, type, bind);
  const right = () => (folded ? sql`lower(${castSql(slot, cast)})` : castSql(slot, cast));
  const key = `${shape} ${slot.name}${cast ? `::${cast}` : ''}`;
  switch (op) {
    case 'eq':
      return { key, sql: () => sql<SqlBool>`${left()} = ${right()}` };
    case 'ne':
      return { key, sql: () => sql<SqlBool>`${left()} <> ${right()}` };
    default: {
      const symbol = sql.raw(ORDER_OPS[op]);
      return {
        key,
        sql: () =>
          type === 'text'
            ? sql<SqlBool>`(${left()}) collate "C" ${symbol} ${right()}`
            : sql<SqlBool>`${left()} ${symbol} ${right()}`,
      };
    }
  }
}

function presentScalar(scalar: Scalar): Part {
  if (scalar.kind === 'constant') return known(scalar.value !== '');
  // RFC 7644 §3.4.2.2: pr is false for null and for an empty string.
  return {
    key: `${scalar.key} pr`,
    sql: () =>
      scalar.type === 'text'
        ? sql<SqlBool>`nullif(${scalar.expr}, '') is not null`
        : sql<SqlBool>`${scalar.expr} is not null`,
  };
}

/** A filter as SQL: the condition, with its comparison values in slots named f0, f1, … */
export interface CompiledFilter {
  /** The condition's SQL, built when called (a query of a shape already compiled does not need it). */
  readonly where: () => RawBuilder<SqlBool>;
  readonly values: SlotValues;
  /** Everything the condition's SQL depends on, slot names included: its part of a query's shape. */
  readonly shape: string;
}

/**
 * Compiles a filter over the rows of `storage`, or, given `relation`, over the rows of that relation
 * (a group's members, for PATCH `remove members[…]`).
 */
export function compileFilter(
  filter: ResolvedFilter,
  storage: StorageMapping,
  relation?: string,
): CompiledFilter {
  const bindings = new Bindings('f');
  const compiler = new FilterCompiler(storage, bindings);
  const part = relation
    ? compiler.compile(filter, { kind: 'relation', subs: storage.relations[relation]!.subs }, relation)
    : compiler.compile(filter);
  let built: RawBuilder<SqlBool> | undefined;
  return {
    where: () => {
      built ??= part.sql();
      return built;
    },
    values: bindings.values,
    shape: `${storage.table}${relation ? `.${relation}` : ''}: ${part.key}`,
  };
}
