// sortBy / sortOrder (RFC 7644 §3.4.2.3) and the keyset predicates behind cursor paging (RFC 9865).
// Every order ends with the id, so it is total and stable; nulls sort last ascending, first descending.
import { type RawBuilder, type SqlBool, sql } from 'kysely';
import { param } from '../db/statement.js';
import { InvalidFilterError, InvalidValueError } from '../http/scim-errors.js';
import {
  derivedOncePerName,
  findAttribute,
  resolveAttributePath,
  unresolvedMessage,
} from '../schema/registry.js';
import type { AttributeDef, ResourceTypeDef } from '../schema/types.js';
import { operandSql } from './compile.js';
import { attributeScalar, pathKey } from './plan.js';
import type { AttributeTarget } from './resolve.js';
import { isConstant, type SqlType, type StorageMapping } from './storage.js';

type SortTarget =
  | AttributeTarget
  /** A multi-valued attribute sorts by a sub-attribute of its primary element, else its first. */
  | {
      readonly kind: 'primaryElement';
      readonly schema: string | undefined;
      readonly extension: boolean;
      readonly attribute: AttributeDef;
      readonly sub: AttributeDef;
    };

export interface SortSpec {
  /** Undefined: creation order (the index order of every table). */
  readonly target: SortTarget | undefined;
  readonly descending: boolean;
  /** A stable text naming the order, for cursors. */
  readonly key: string;
}

export function resolveSort(type: ResourceTypeDef, sortBy?: string, sortOrder?: string): SortSpec {
  let descending = false;
  if (sortOrder !== undefined && sortOrder !== '') {
    const order = sortOrder.toLowerCase();
    if (order !== 'ascending' && order !== 'descending') {
      throw new InvalidValueError(`sortOrder must be "ascending" or "descending", not "${sortOrder}"`);
    }
    descending = order === 'descending';
  }
  if (sortBy === undefined || sortBy === '') return { target: undefined, descending, key: `:${descending}` };
  const resolved = resolveAttributePath(type, sortBy);
  if (resolved?.kind !== 'attribute' || resolved.attribute.returned === 'never') {
    const never = resolved?.kind === 'attribute' ? undefined : resolved;
    const why = never?.kind === 'ambiguous' ? 'ambiguous_attribute' : 'unknown_attribute';
    throw new InvalidValueError(`sortBy: ${unresolvedMessage(never, sortBy, type)}`, why);
  }
  const schema = resolved.schema?.id;
  const base = {
    schema,
    extension: schema !== undefined && schema !== type.schema,
    attribute: resolved.attribute,
  };
  let target: SortTarget;
  if (resolved.attribute.multiValued) {
    const sub = resolved.subAttribute ?? findAttribute(resolved.attribute.subAttributes ?? [], 'value');
    if (!sub) throw new InvalidValueError(`sortBy: name a sub-attribute of ${sortBy}`);
    target = { kind: 'primaryElement', ...base, sub };
  } else {
    const sub =
      resolved.subAttribute ??
      (resolved.attribute.type === 'complex'
        ? findAttribute(resolved.attribute.subAttributes ?? [], 'value')
        : undefined);
    if (resolved.attribute.type === 'complex' && !sub)
      throw new InvalidValueError(`sortBy: name a sub-attribute of ${sortBy}`);
    target = { kind: 'attribute', ...base, ...(sub ? { sub } : {}) };
  }
  return { target, descending, key: `${pathKey(target)}:${descending}` };
}

export interface SortKey {
  /** Names the order (the sort spec's key) within one resource type: part of a list query's shape. */
  readonly name: string;
  readonly expr: RawBuilder<unknown>;
  readonly type: SqlType;
  /** Never null (the creation time): the keyset is then a row comparison an index range can serve. */
  readonly notNull?: boolean;
}

const sortKeys = derivedOncePerName<StorageMapping, SortKey>();

/**
 * The expression rows are ordered by (before the id), as the storage holds it. It depends on the
 * order and the storage alone, and Kysely's builders are immutable: each is built once.
 */
export function compileSortKey(sort: SortSpec, storage: StorageMapping, createdColumn: string): SortKey {
  // The same path may be an attribute of different characteristics in two organizations' registries.
  const compared = sort.target && (sort.target.sub ?? sort.target.attribute);
  const shape = compared ? ` ${compared.type} ${compared.caseExact}` : '';
  return sortKeys(storage, `${createdColumn} ${sort.key}${shape}`, () => ({
    name: sort.key,
    ...sortExpression(sort, storage, createdColumn),
  }));
}

function sortExpression(
  sort: SortSpec,
  storage: StorageMapping,
  createdColumn: string,
): Omit<SortKey, 'name'> {
  const target = sort.target;
  if (!target)
    return { expr: sql.ref(`${storage.table}.${createdColumn}`), type: 'timestamptz', notNull: true };
  if (target.kind === 'primaryElement') {
    if (!target.extension && storage.relations[target.attribute.name]) {
      throw new InvalidValueError(`sortBy: ${target.attribute.name} cannot be sorted on`);
    }
    const data = sql.ref(`${storage.table}.${storage.data}`);
    const holder = target.extension ? sql`(${data}->${sql.lit(target.schema!)})` : data;
    const array = sql`coalesce(${holder}->${sql.lit(target.attribute.name)}, '[]'::jsonb)`;
    const value = sql`e.v->>${sql.lit(target.sub.name)}`;
    const folded = target.sub.caseExact ? value : sql`lower(${value})`;
    const expr = sql`(select ${folded} from jsonb_array_elements(${array}) with ordinality as e(v, n) order by coalesce((e.v->'primary') = 'true'::jsonb, false) desc, n limit 1) collate "C"`;
    return { expr, type: 'text' };
  }
  const spec = storage.columns[pathKey(target)];
  // A constant of the storage mapping (a resource type's name) is written into the SQL as a literal.
  if (spec && isConstant(spec)) return { expr: sql`${sql.lit(spec.constant)}::text`, type: 'text' };
  let scalar: ReturnType<typeof attributeScalar>;
  try {
    scalar = attributeScalar(storage, target);
  } catch (error) {
    if (error instanceof InvalidFilterError)
      throw new InvalidValueError(`sortBy: ${pathKey(target)} cannot be sorted on`);
    throw error;
  }
  if (scalar.kind === 'constant') return { expr: sql`${sql.lit(scalar.value)}::text`, type: 'text' };
  const expr = operandSql(scalar.operand, storage);
  if (scalar.operand.type !== 'text') return { expr, type: scalar.operand.type };
  return { expr: sql`(${scalar.caseExact ? expr : sql`lower(${expr})`}) collate "C"`, type: 'text' };
}

function typed(value: unknown, type: SqlType): RawBuilder<unknown> {
  return type === 'text' ? sql`${value}` : sql`${value}::${sql.raw(type)}`;
}

/** The parameters keysetAfter reads the last row's sort key and id from. */
export const KEYSET_PARAMETERS = { value: 'afterValue', id: 'afterId' } as const;

/**
 * Rows strictly after (key, id) in the order `key [desc], id [desc]` with nulls last ascending and
 * first descending. Reading backwards uses the same predicate with the direction flipped. The last
 * row's key and id are read from the parameters KEYSET_PARAMETERS names; whether its key is null
 * shapes the SQL.
 */
export function keysetAfter(
  key: SortKey,
  idColumn: RawBuilder<unknown>,
  descending: boolean,
  lastValueIsNull: boolean,
): RawBuilder<SqlBool> {
  const beyond = sql.raw(descending ? '<' : '>');
  const id = sql`${param(KEYSET_PARAMETERS.id)}::uuid`;
  if (key.notNull && !lastValueIsNull) {
    return sql<SqlBool>`(${key.expr}, ${idColumn}) ${beyond} (${typed(param(KEYSET_PARAMETERS.value), key.type)}, ${id})`;
  }
  if (lastValueIsNull) {
    // Nulls come last ascending: after a null only nulls with a later id. Descending, nulls come
    // first: after a null come later-id nulls and then every non-null.
    return descending
      ? sql<SqlBool>`((${key.expr} is null and ${idColumn} < ${id}) or ${key.expr} is not null)`
      : sql<SqlBool>`(${key.expr} is null and ${idColumn} > ${id})`;
  }
  const value = typed(param(KEYSET_PARAMETERS.value), key.type);
  const tail = descending ? sql`` : sql` or ${key.expr} is null`;
  return sql<SqlBool>`(${key.expr} ${beyond} ${value} or (${key.expr} = ${value} and ${idColumn} ${beyond} ${id})${tail})`;
}

export function orderBy(descending: boolean): { key: RawBuilder<unknown>; id: RawBuilder<unknown> } {
  return descending
    ? { key: sql.raw('desc nulls first'), id: sql.raw('desc') }
    : { key: sql.raw('asc nulls last'), id: sql.raw('asc') };
}
