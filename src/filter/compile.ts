// compile: a resolved filter → one SQL boolean expression over the resource's table, through the
// table's StorageMapping. Comparisons follow the schema: caseExact false compares lower() on both
// sides; ordering on text uses the "C" collation (code point order, the same on every Postgres).
// Comparison values enter the SQL as slots (db/shapes.ts), so one compiled list query serves every
// filter of the same shape.
import { createQueryId, PostgresQueryCompiler, type RawBuilder, type SqlBool, sql } from 'kysely';
import { isUuid } from '../db/ids.js';
import { Bindings, Slot, type SlotValues } from '../db/shapes.js';
import { InvalidFilterError } from '../http/scim-errors.js';
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

/** A value the compiler can compare: an SQL expression of a known type, or a constant known here. */
export type Scalar =
  | { readonly kind: 'sql'; readonly expr: Sql; readonly type: SqlType; readonly caseExact: boolean }
  | { readonly kind: 'constant'; readonly value: string; readonly caseExact: boolean };

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
function jsonScalar(object: Sql, attr: AttributeDef): Scalar {
  const key = sql.lit(attr.name);
  const type = sqlTypeOf(attr);
  const expr =
    type === 'text'
      ? sql`(${object}->>${key})`
      : type === 'timestamptz'
        ? sql`(${object}->>${key})::timestamptz`
        : sql`(${object}->${key})::${sql.raw(type)}`;
  return { kind: 'sql', expr, type, caseExact: attr.caseExact };
}

function fromSpec(
  spec: ColumnSpec | ConstantSpec,
  attr: AttributeDef,
  qualify: (column: string) => string,
): Scalar {
  if (isConstant(spec)) return { kind: 'constant', value: spec.constant, caseExact: attr.caseExact };
  return { kind: 'sql', expr: sql.ref(qualify(spec.column)), type: spec.type, caseExact: attr.caseExact };
}

export function pathKey(target: {
  schema: string | undefined;
  extension: boolean;
  attribute: AttributeDef;
  sub?: AttributeDef;
}) {
  return `${target.extension ? `${target.schema}:` : ''}${target.attribute.name}${target.sub ? `.${target.sub.name}` : ''}`;
}

/** Binds a comparison value: the parameter the SQL holds in its place. */
type Bind = (value: unknown) => unknown;

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
    const def = target.sub ?? target.attribute;
    const spec = this.storage.columns[pathKey(target)];
    if (spec) return fromSpec(spec, def, (c) => `${this.storage.table}.${c}`);
    if (target.schema === undefined) {
      throw new InvalidFilterError(`${pathKey(target)} cannot be used in a filter or sort`);
    }
    const holder = target.sub
      ? sql`(${this.container(target)}->${sql.lit(target.attribute.name)})`
      : this.container(target);
    return jsonScalar(holder, def);
  }

  private elementScalar(sub: AttributeDef, source: ElementSource, owner: string): Scalar {
    if (source.kind === 'json') return jsonScalar(ELEMENT, sub);
    const spec = source.subs[sub.name];
    if (!spec) throw new InvalidFilterError(`${owner}.${sub.name} cannot be used in a filter`);
    return fromSpec(spec, sub, (c) => c);
  }

  private scalar(target: Target, source: ElementSource | undefined, owner: string): Scalar {
    if (target.kind === 'attribute') return this.attributeScalar(target);
    return this.elementScalar(target.sub, source!, owner);
  }

  compile(filter: ResolvedFilter, source?: ElementSource, owner = ''): RawBuilder<SqlBool> {
    switch (filter.kind) {
      case 'and':
      case 'or': {
        const parts = filter.filters.map((f) => this.compile(f, source, owner));
        return sql<SqlBool>`(${sql.join(parts, filter.kind === 'and' ? sql` and ` : sql` or `)})`;
      }
      case 'not':
        // Two-valued logic: a comparison on an absent attribute is false, so its negation is true.
        return sql<SqlBool>`not coalesce(${this.compile(filter.filter, source, owner)}, false)`;
      case 'compare':
        return compareScalar(this.scalar(filter.target, source, owner), filter.op, filter.value, this.bind);
      case 'present': {
        const target = filter.target;
        if (target.kind === 'multiValued') return this.anyElement(target);
        if (target.kind === 'attribute' && !target.sub && target.attribute.type === 'complex') {
          // A complex attribute kept in columns (meta) is present whenever one of its parts is.
          const prefix = `${pathKey(target)}.`;
          if (Object.keys(this.storage.columns).some((k) => k.startsWith(prefix))) return sql<SqlBool>`true`;
          return sql<SqlBool>`(${this.container(target)}->${sql.lit(target.attribute.name)}) is not null`;
        }
        return presentScalar(this.scalar(target, source, owner));
      }
      case 'valuePath':
        return this.anyElement(filter.target, filter.filter);
    }
  }

  /** True when some element of a multi-valued attribute satisfies `inner` (any element, when absent). */
  private anyElement(target: MultiValuedTarget, inner?: ResolvedFilter): RawBuilder<SqlBool> {
    const name = target.attribute.name;
    const relation = target.extension ? undefined : this.storage.relations[name];
    if (relation) {
      const cond = inner ? this.compile(inner, { kind: 'relation', subs: relation.subs }, name) : sql`true`;
      return sql<SqlBool>`exists (select 1 from ${relation.rows(this.storage.table)} and ${cond})`;
    }
    const array = sql`(${this.container(target)}->${sql.lit(name)})`;
    const cond = inner ? this.compile(inner, { kind: 'json' }, name) : sql`true`;
    const exists = sql<SqlBool>`exists (select 1 from jsonb_array_elements(coalesce(${array}, '[]'::jsonb)) as e(v) where ${cond})`;
    const probe =
      inner && !target.extension && this.storage.indexedValues.has(name) ? valueEquality(inner) : undefined;
    // The GIN index on scim_ci_values(data->'emails') finds candidates; EXISTS keeps the correlation.
    return probe === undefined
      ? exists
      : sql<SqlBool>`(scim_ci_values(${array}) @> array[lower(${this.bind(probe)})] and ${exists})`;
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

function param(value: Comparable, type: SqlType, bind: Bind): Sql {
  if (value instanceof Date) return sql`${bind(value.toISOString())}::timestamptz`;
  if (type === 'text') return sql`${bind(String(value))}`;
  return sql`${bind(value)}::${sql.raw(type)}`;
}

const ORDER_OPS: Record<'gt' | 'ge' | 'lt' | 'le', string> = { gt: '>', ge: '>=', lt: '<', le: '<=' };

export function compareScalar(
  scalar: Scalar,
  op: CompareOp,
  value: Comparable,
  bind: Bind,
): RawBuilder<SqlBool> {
  if (scalar.kind === 'constant') {
    return compareValues(scalar.value, op, value, scalar.caseExact)
      ? sql<SqlBool>`true`
      : sql<SqlBool>`false`;
  }
  let { expr, type } = scalar;
  if (type === 'uuid') {
    if (op === 'eq' || op === 'ne') {
      // A value that is no uuid equals no id (and must not reach Postgres as a failed cast).
      // uuid equality ignores case; a caseExact attribute (id) must not.
      const matchable =
        typeof value === 'string' && isUuid(value) && (!scalar.caseExact || value === value.toLowerCase());
      if (matchable) return sql<SqlBool>`${expr} ${sql.raw(op === 'eq' ? '=' : '<>')} ${bind(value)}::uuid`;
      return op === 'eq' ? sql<SqlBool>`false` : sql<SqlBool>`${expr} is not null`;
    }
    expr = sql`${expr}::text`;
    type = 'text';
  }
  const folded = type === 'text' && !scalar.caseExact;
  const left = folded ? sql`lower(${expr})` : expr;
  const bound = param(value, type, bind);
  const right = folded ? sql`lower(${bound})` : bound;
  switch (op) {
    case 'eq':
      return sql<SqlBool>`${left} = ${right}`;
    case 'ne':
      return sql<SqlBool>`${left} <> ${right}`;
    case 'co':
    case 'sw':
    case 'ew': {
      const body = escapeLike(String(value));
      const pattern = op === 'co' ? `%${body}%` : op === 'sw' ? `${body}%` : `%${body}`;
      const p = folded ? sql`lower(${bind(pattern)})` : sql`${bind(pattern)}`;
      return sql<SqlBool>`${left} like ${p} escape '\\'`;
    }
    default: {
      const symbol = sql.raw(ORDER_OPS[op]);
      return type === 'text'
        ? sql<SqlBool>`(${left}) collate "C" ${symbol} ${right}`
        : sql<SqlBool>`${left} ${symbol} ${right}`;
    }
  }
}

function presentScalar(scalar: Scalar): RawBuilder<SqlBool> {
  if (scalar.kind === 'constant') return scalar.value === '' ? sql<SqlBool>`false` : sql<SqlBool>`true`;
  // RFC 7644 §3.4.2.2: pr is false for null and for an empty string.
  return scalar.type === 'text'
    ? sql<SqlBool>`nullif(${scalar.expr}, '') is not null`
    : sql<SqlBool>`${scalar.expr} is not null`;
}

/** A filter as SQL: the condition, with its comparison values in slots named f0, f1, … */
export interface CompiledFilter {
  readonly where: RawBuilder<SqlBool>;
  readonly values: SlotValues;
  /** The condition's SQL and the slots in the order it reads them: its part of a query's shape. */
  readonly shape: string;
}

const shapeCompiler = new PostgresQueryCompiler();

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
  const where = relation
    ? compiler.compile(filter, { kind: 'relation', subs: storage.relations[relation]!.subs }, relation)
    : compiler.compile(filter);
  const { sql: text, parameters } = shapeCompiler.compileQuery(where.toOperationNode(), createQueryId());
  const slots = parameters.map((p) => (p instanceof Slot ? p.name : '?')).join(',');
  return { where, values: bindings.values, shape: `${slots}\n${text}` };
}
