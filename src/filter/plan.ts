// plan: a resolved filter laid onto a table (its StorageMapping), as plain data. Every decision a
// value makes is taken here: an id that is no uuid matches nothing, a comparison with a constant of
// the storage is true or false, a case-insensitive email equality gets the index probe, a substring
// becomes a LIKE pattern. Each value becomes a parameter, by position. What is left, the Condition,
// depends on the filter's shape alone: compile.ts renders it as SQL, and its JSON is the shape's key
// (a list statement is built once per key: db/statement.ts).
import { isUuid } from '../db/ids.js';
import { InvalidFilterError } from '../http/scim-errors.js';
import type { AttributeDef } from '../schema/types.js';
import type { CompareOp } from './ast.js';
import { type Comparable, compareValues } from './compare.js';
import type { AttributeTarget, MultiValuedTarget, ResolvedFilter, Target } from './resolve.js';
import {
  type ColumnSpec,
  type ConstantSpec,
  isComputed,
  isConstant,
  type SqlType,
  type StorageMapping,
} from './storage.js';

/** A value the database reads for a comparison. */
export type Operand =
  /** A column: of the table (`users.user_name`), or of a relation's rows (`gm.user_id`). */
  | { readonly kind: 'column'; readonly column: string; readonly type: SqlType }
  /** A value the storage computes (its ComputedSpec), by the attribute's path. */
  | { readonly kind: 'computed'; readonly path: string; readonly type: SqlType }
  /** A value in the table's jsonb data: `attribute`, or its `sub`, in the core or an extension. */
  | {
      readonly kind: 'json';
      readonly extension?: string;
      readonly attribute: string;
      readonly sub?: string;
      readonly type: SqlType;
    }
  /** A sub-attribute of the jsonb element a value path is looking at. */
  | { readonly kind: 'element'; readonly sub: string; readonly type: SqlType };

type SqlOperator = '=' | '<>' | '>' | '>=' | '<' | '<=' | 'like';

export type Condition =
  | { readonly kind: 'constant'; readonly value: boolean }
  | { readonly kind: 'and' | 'or'; readonly conditions: readonly Condition[] }
  | { readonly kind: 'not'; readonly condition: Condition }
  | {
      readonly kind: 'compare';
      readonly operand: Operand;
      readonly operator: SqlOperator;
      /** The position of the compared value among the plan's parameters. */
      readonly parameter: number;
      /** Both sides lower-cased (caseExact false). */
      readonly folded: boolean;
      /** The operand read as text (a uuid under co, sw, ew or an ordering). */
      readonly asText: boolean;
      /** The type the parameter is cast to; none for text. */
      readonly cast?: SqlType;
    }
  | { readonly kind: 'present'; readonly operand: Operand }
  /** A complex attribute kept in the data column has a value. */
  | { readonly kind: 'hasObject'; readonly extension?: string; readonly attribute: string }
  | { readonly kind: 'hasExtension'; readonly schema: string }
  /** The index of custom extension values holds this (lower-cased) value for a json operand. */
  | {
      readonly kind: 'extensionProbe';
      readonly operand: Extract<Operand, { kind: 'json' }>;
      readonly parameter: number;
    }
  /** Some row of a relation (a group's members, a user's groups) satisfies `condition`. */
  | { readonly kind: 'anyRow'; readonly relation: string; readonly condition: Condition }
  /** Some element of a jsonb array satisfies `condition`; `probe`: the index's value parameter. */
  | {
      readonly kind: 'anyElement';
      readonly extension?: string;
      readonly attribute: string;
      readonly condition: Condition;
      readonly probe?: number;
    };

export interface FilterPlan {
  readonly condition: Condition;
  /** The values, by the positions the condition names. */
  readonly parameters: readonly unknown[];
}

const TRUE: Condition = { kind: 'constant', value: true };
const FALSE: Condition = { kind: 'constant', value: false };
const constant = (value: boolean) => (value ? TRUE : FALSE);

function sqlTypeOf(attr: AttributeDef): SqlType {
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

/** How a target is named in a storage mapping: `userName`, `name.givenName`, `urn:…:User:manager.value`. */
export function pathKey(target: {
  schema: string | undefined;
  extension: boolean;
  attribute: AttributeDef;
  sub?: AttributeDef;
}): string {
  return `${target.extension ? `${target.schema}:` : ''}${target.attribute.name}${target.sub ? `.${target.sub.name}` : ''}`;
}

/** A comparable value: an operand, or a constant the storage gives every resource. */
type Scalar =
  | { readonly kind: 'operand'; readonly operand: Operand; readonly caseExact: boolean }
  | { readonly kind: 'constant'; readonly value: string; readonly caseExact: boolean };

/** Where element sub-attributes come from inside a value path. */
type ElementSource =
  | { readonly kind: 'json' }
  | { readonly kind: 'relation'; readonly subs: Readonly<Record<string, ColumnSpec | ConstantSpec>> };

function fromSpec(
  spec: ColumnSpec | ConstantSpec,
  attr: AttributeDef,
  column: (name: string) => string,
): Scalar {
  if (isConstant(spec)) return { kind: 'constant', value: spec.constant, caseExact: attr.caseExact };
  return {
    kind: 'operand',
    operand: { kind: 'column', column: column(spec.column), type: spec.type },
    caseExact: attr.caseExact,
  };
}

/** How `storage` holds an attribute of the resource (also used for sorting). */
export function attributeScalar(storage: StorageMapping, target: AttributeTarget): Scalar {
  const path = pathKey(target);
  const def = target.sub ?? target.attribute;
  const spec = storage.columns[path];
  if (spec && isComputed(spec))
    return {
      kind: 'operand',
      operand: { kind: 'computed', path, type: spec.type },
      caseExact: def.caseExact,
    };
  if (spec) return fromSpec(spec, def, (c) => `${storage.table}.${c}`);
  if (target.schema === undefined)
    throw new InvalidFilterError(`${path} cannot be used in a filter or sort`, 'unknown_attribute');
  return {
    kind: 'operand',
    operand: {
      kind: 'json',
      ...(target.extension ? { extension: target.schema } : {}),
      attribute: target.attribute.name,
      ...(target.sub ? { sub: target.sub.name } : {}),
      type: sqlTypeOf(def),
    },
    caseExact: def.caseExact,
  };
}

function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

const ORDERINGS: Readonly<Record<'gt' | 'ge' | 'lt' | 'le', SqlOperator>> = {
  gt: '>',
  ge: '>=',
  lt: '<',
  le: '<=',
};

/** The string an element filter requires its case-insensitive `value` to equal, when it does. */
function valueEquality(filter: ResolvedFilter): string | undefined {
  if (filter.kind === 'compare') {
    const target = filter.target;
    const isValue = target.kind === 'element' && target.sub.name === 'value' && !target.sub.caseExact;
    return isValue && filter.op === 'eq' && typeof filter.value === 'string' ? filter.value : undefined;
  }
  if (filter.kind === 'and') {
    for (const f of filter.filters) {
      const found = valueEquality(f);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

class Planner {
  readonly parameters: unknown[] = [];

  constructor(private readonly storage: StorageMapping) {}

  private indexesExtension(extension: string | undefined): boolean {
    const indexed = this.storage.extensionValues;
    return extension !== undefined && indexed !== undefined && !indexed.unindexed.has(extension);
  }

  private bind(value: unknown): number {
    return this.parameters.push(value) - 1;
  }

  private elementScalar(sub: AttributeDef, source: ElementSource, owner: string): Scalar {
    if (source.kind === 'json') {
      return {
        kind: 'operand',
        operand: { kind: 'element', sub: sub.name, type: sqlTypeOf(sub) },
        caseExact: sub.caseExact,
      };
    }
    const spec = source.subs[sub.name];
    if (!spec)
      throw new InvalidFilterError(`${owner}.${sub.name} cannot be used in a filter`, 'unknown_attribute');
    return fromSpec(spec, sub, (c) => c);
  }

  private scalar(target: Target, source: ElementSource | undefined, owner: string): Scalar {
    if (target.kind === 'attribute') return attributeScalar(this.storage, target);
    return this.elementScalar(target.sub, source!, owner);
  }

  plan(filter: ResolvedFilter, source?: ElementSource, owner = ''): Condition {
    switch (filter.kind) {
      case 'and':
      case 'or':
        return { kind: filter.kind, conditions: filter.filters.map((f) => this.plan(f, source, owner)) };
      case 'not':
        return { kind: 'not', condition: this.plan(filter.filter, source, owner) };
      case 'constant':
        return constant(filter.value);
      case 'extension':
        return { kind: 'hasExtension', schema: filter.schema };
      case 'compare':
        return this.compare(this.scalar(filter.target, source, owner), filter.op, filter.value);
      case 'present': {
        const target = filter.target;
        if (target.kind === 'multiValued') return this.anyElement(target);
        if (target.kind === 'attribute' && !target.sub && target.attribute.type === 'complex') {
          // A complex attribute kept in columns (meta) is present whenever one of its parts is.
          const prefix = `${pathKey(target)}.`;
          if (Object.keys(this.storage.columns).some((k) => k.startsWith(prefix))) return TRUE;
          return {
            kind: 'hasObject',
            ...(target.extension ? { extension: target.schema } : {}),
            attribute: target.attribute.name,
          };
        }
        const scalar = this.scalar(target, source, owner);
        // RFC 7644 §3.4.2.2: pr is false for null and for an empty string.
        if (scalar.kind === 'constant') return constant(scalar.value !== '');
        return { kind: 'present', operand: scalar.operand };
      }
      case 'valuePath':
        return this.anyElement(filter.target, filter.filter);
    }
  }

  /** Some element of a multi-valued attribute satisfies `inner` (any element, when absent). */
  private anyElement(target: MultiValuedTarget, inner?: ResolvedFilter): Condition {
    const name = target.attribute.name;
    const relation = target.extension ? undefined : this.storage.relations[name];
    if (relation) {
      const condition = inner ? this.plan(inner, { kind: 'relation', subs: relation.subs }, name) : TRUE;
      return { kind: 'anyRow', relation: name, condition };
    }
    const condition = inner ? this.plan(inner, { kind: 'json' }, name) : TRUE;
    const equality =
      inner && !target.extension && this.storage.indexedValues.has(name) ? valueEquality(inner) : undefined;
    return {
      kind: 'anyElement',
      ...(target.extension ? { extension: target.schema } : {}),
      attribute: name,
      condition,
      // The GIN index of the attribute's lower-cased values finds candidates; the element test keeps
      // the correlation.
      ...(equality !== undefined ? { probe: this.bind(equality) } : {}),
    };
  }

  private compare(scalar: Scalar, op: CompareOp, value: Comparable): Condition {
    if (scalar.kind === 'constant') return constant(compareValues(scalar.value, op, value, scalar.caseExact));
    const operand = scalar.operand;
    let type = operand.type;
    let asText = false;
    if (type === 'uuid') {
      if (op === 'eq' || op === 'ne') {
        // A value that is no uuid equals no id (and must not reach Postgres as a failed cast).
        // uuid equality ignores case; a caseExact attribute (id) must not.
        const matchable =
          typeof value === 'string' && isUuid(value) && (!scalar.caseExact || value === value.toLowerCase());
        if (!matchable) return op === 'eq' ? FALSE : { kind: 'present', operand };
        return {
          kind: 'compare',
          operand,
          operator: op === 'eq' ? '=' : '<>',
          parameter: this.bind(value),
          folded: false,
          asText: false,
          cast: 'uuid',
        };
      }
      asText = true;
      type = 'text';
    }
    const folded = type === 'text' && !scalar.caseExact;
    if (op === 'co' || op === 'sw' || op === 'ew') {
      const body = escapeLike(String(value));
      const pattern = op === 'co' ? `%${body}%` : op === 'sw' ? `${body}%` : `%${body}`;
      return { kind: 'compare', operand, operator: 'like', parameter: this.bind(pattern), folded, asText };
    }
    const operator: SqlOperator = op === 'eq' ? '=' : op === 'ne' ? '<>' : ORDERINGS[op];
    if (value instanceof Date) {
      const parameter = this.bind(value.toISOString());
      return { kind: 'compare', operand, operator, parameter, folded, asText, cast: 'timestamptz' };
    }
    if (type === 'text') {
      const parameter = this.bind(String(value));
      const condition: Condition = { kind: 'compare', operand, operator, parameter, folded, asText };
      if (op !== 'eq' || operand.kind !== 'json' || !this.indexesExtension(operand.extension))
        return condition;
      // An organization's own string attribute: its index finds the candidates, the comparison decides.
      return { kind: 'and', conditions: [{ kind: 'extensionProbe', operand, parameter }, condition] };
    }
    return { kind: 'compare', operand, operator, parameter: this.bind(value), folded, asText, cast: type };
  }
}

/**
 * Lays a filter onto the rows of `storage`, or, given `relation`, onto the rows of that relation (a
 * group's members, for PATCH `remove members[…]`).
 */
export function planFilter(filter: ResolvedFilter, storage: StorageMapping, relation?: string): FilterPlan {
  const planner = new Planner(storage);
  const condition = relation
    ? planner.plan(filter, { kind: 'relation', subs: storage.relations[relation]!.subs }, relation)
    : planner.plan(filter);
  return { condition, parameters: planner.parameters };
}

/** The shape of a plan: what its SQL depends on, the values left out. */
export function conditionKey(condition: Condition): string {
  return JSON.stringify(condition);
}
