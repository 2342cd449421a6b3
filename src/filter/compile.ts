// compile: a planned condition (plan.ts) as one SQL boolean expression over the table of its storage
// mapping, with each value as a named parameter (`f0`, `f1`, …, by position). Comparisons follow the
// plan: folded text compares lower() on both sides; ordering on text uses the "C" collation (code
// point order, the same on every Postgres).
import { type RawBuilder, type SqlBool, sql } from 'kysely';
import { param } from '../db/statement.js';
import type { Condition, FilterPlan, Operand } from './plan.js';
import { isComputed, type StorageMapping } from './storage.js';

type Sql = RawBuilder<unknown>;

const ELEMENT = sql.raw('e.v');

/** The name of the parameter at `position` among a filter's values. */
function filterParameter(position: number): string {
  return `f${position}`;
}

/** A filter plan's values under the names its SQL gives them. */
export function filterValues(plan: FilterPlan): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  plan.parameters.forEach((value, position) => {
    values[filterParameter(position)] = value;
  });
  return values;
}

function dataColumn(storage: StorageMapping): Sql {
  return sql.ref(`${storage.table}.${storage.data}`);
}

/** The jsonb object holding an attribute: the data column, or the extension object in it. */
function container(storage: StorageMapping, extension: string | undefined): Sql {
  return extension ? sql`(${dataColumn(storage)}->${sql.lit(extension)})` : dataColumn(storage);
}

function typedText(text: Sql, type: Operand['type'], json: Sql, key: Sql): Sql {
  if (type === 'text') return text;
  if (type === 'timestamptz') return sql`(${text})::timestamptz`;
  return sql`(${json}->${key})::${sql.raw(type)}`;
}

/** The SQL of an operand (also the expression a sort orders by). */
export function operandSql(operand: Operand, storage: StorageMapping): Sql {
  switch (operand.kind) {
    case 'column':
      return sql.ref(operand.column);
    case 'computed': {
      const spec = storage.columns[operand.path]!;
      if (!isComputed(spec)) throw new Error(`${operand.path} is not computed by ${storage.table}`);
      return spec.computed(storage.table);
    }
    case 'element': {
      const key = sql.lit(operand.sub);
      return typedText(sql`(${ELEMENT}->>${key})`, operand.type, ELEMENT, key);
    }
    case 'json': {
      const object = operand.sub
        ? sql`(${container(storage, operand.extension)}->${sql.lit(operand.attribute)})`
        : container(storage, operand.extension);
      const key = sql.lit(operand.sub ?? operand.attribute);
      return typedText(sql`(${object}->>${key})`, operand.type, object, key);
    }
  }
}

/**
 * Whether a user's lower-cased values of organizations' own extensions (`values`, the column
 * users_extension_values indexes) contain `contained`. The index holds only users with such values,
 * so the query names that condition too, for the planner to use it.
 */
export function extensionValuesHold(values: Sql, contained: Sql): RawBuilder<SqlBool> {
  // The probe is a subquery, unknown when the statement is planned: a plan made for one value is no
  // better than one for any, so Postgres keeps a generic plan instead of planning every lookup anew
  // (which cost it more than the lookup).
  return sql<SqlBool>`(${values} <> '{}'::jsonb and ${values} @> (select ${contained}))`;
}

export function compileCondition(condition: Condition, storage: StorageMapping): RawBuilder<SqlBool> {
  switch (condition.kind) {
    case 'constant':
      return condition.value ? sql<SqlBool>`true` : sql<SqlBool>`false`;
    case 'and':
    case 'or':
      return sql<SqlBool>`(${sql.join(
        condition.conditions.map((c) => compileCondition(c, storage)),
        sql.raw(` ${condition.kind} `),
      )})`;
    case 'not':
      // Two-valued logic: a comparison on an absent attribute is false, so its negation is true.
      return sql<SqlBool>`not coalesce(${compileCondition(condition.condition, storage)}, false)`;
    case 'present': {
      const expr = operandSql(condition.operand, storage);
      // RFC 7644 §3.4.2.2: pr is false for null and for an empty string.
      return condition.operand.type === 'text'
        ? sql<SqlBool>`nullif(${expr}, '') is not null`
        : sql<SqlBool>`${expr} is not null`;
    }
    case 'hasObject':
      return sql<SqlBool>`(${container(storage, condition.extension)}->${sql.lit(condition.attribute)}) is not null`;
    case 'hasExtension':
      return sql<SqlBool>`(${dataColumn(storage)} ? ${sql.lit(condition.schema)})`;
    case 'compare':
      return compare(condition, storage);
    case 'extensionProbe': {
      const { operand } = condition;
      const value = sql`lower(${param(filterParameter(condition.parameter))}::text)`;
      const held = operand.sub
        ? sql`jsonb_build_object(${sql.lit(operand.sub.toLowerCase())}, ${value})`
        : value;
      return extensionValuesHold(
        sql.ref(`${storage.table}.${storage.extensionValues!.column}`),
        sql`jsonb_build_object(${sql.lit(operand.extension!.toLowerCase())}, jsonb_build_object(${sql.lit(
          operand.attribute.toLowerCase(),
        )}, ${held}))`,
      );
    }
    case 'anyRow': {
      const relation = storage.relations[condition.relation]!;
      return sql<SqlBool>`exists (select 1 from ${relation.rows(storage.table)} and ${compileCondition(condition.condition, storage)})`;
    }
    case 'anyElement': {
      const array = sql`(${container(storage, condition.extension)}->${sql.lit(condition.attribute)})`;
      const exists = sql<SqlBool>`exists (select 1 from jsonb_array_elements(coalesce(${array}, '[]'::jsonb)) as e(v) where ${compileCondition(condition.condition, storage)})`;
      if (condition.probe === undefined) return exists;
      const probe = param(filterParameter(condition.probe));
      const values = sql.ref(`${storage.table}.${storage.indexedValues.get(condition.attribute)!}`);
      return sql<SqlBool>`(${values} @> jsonb_build_array(lower(${probe})) and ${exists})`;
    }
  }
}

function compare(
  condition: Extract<Condition, { kind: 'compare' }>,
  storage: StorageMapping,
): RawBuilder<SqlBool> {
  let left = operandSql(condition.operand, storage);
  if (condition.asText) left = sql`${left}::text`;
  let right: Sql = sql`${param(filterParameter(condition.parameter))}`;
  if (condition.cast) right = sql`${right}::${sql.raw(condition.cast)}`;
  if (condition.folded) {
    left = sql`lower(${left})`;
    right = sql`lower(${right})`;
  }
  const operator = condition.operator;
  if (operator === 'like') return sql<SqlBool>`${left} like ${right} escape '\\'`;
  const text = condition.operand.type === 'text' || condition.asText;
  if (text && operator !== '=' && operator !== '<>') {
    return sql<SqlBool>`(${left}) collate "C" ${sql.raw(operator)} ${right}`;
  }
  return sql<SqlBool>`${left} ${sql.raw(operator)} ${right}`;
}
