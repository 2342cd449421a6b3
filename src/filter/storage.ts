// How a resource type is stored, as the filter compiler needs to know it. Each repository describes
// its table with one of these; the compiler turns attribute targets into SQL through it.
import type { RawBuilder } from 'kysely';

export type SqlType = 'text' | 'uuid' | 'boolean' | 'timestamptz' | 'numeric';

/** An attribute kept in a column of its own (`userName` → users.user_name). */
export interface ColumnSpec {
  readonly column: string;
  readonly type: SqlType;
}

/** An attribute whose value is the same for every resource (`meta.resourceType`, `members.type`). */
export interface ConstantSpec {
  readonly constant: string;
}

/** An attribute worked out from several columns or tables (a group's `meta.lastModified`). */
export interface ComputedSpec {
  /** The value for the resource in `table` (a table name or alias). */
  readonly computed: (table: string) => RawBuilder<unknown>;
  readonly type: SqlType;
}

/** A multi-valued attribute stored as rows of another table (`members` → group_members). */
interface RelationSpec {
  /** `FROM … WHERE …` selecting the element rows of the resource in `owner` (a table name). */
  readonly rows: (owner: string) => RawBuilder<unknown>;
  /** Each filterable sub-attribute, by name: a column of the rows above, or a constant. */
  readonly subs: Readonly<Record<string, ColumnSpec | ConstantSpec>>;
}

export interface StorageMapping {
  readonly table: string;
  /** The jsonb column holding every attribute without a column: core at the top, extensions under their URN. */
  readonly data: string;
  /** Attributes with columns of their own (or computed), keyed by path: `id`, `userName`, `meta.created`. */
  readonly columns: Readonly<Record<string, ColumnSpec | ConstantSpec | ComputedSpec>>;
  /** Multi-valued attributes stored as rows, keyed by attribute name. */
  readonly relations: Readonly<Record<string, RelationSpec>>;
  /**
   * Multi-valued attributes whose lower-cased `value`s a GIN-indexed column holds (generated as
   * scim_lower_values(data->'<name>')), with that column: an `eq` on their `value` adds a containment
   * test the index can answer.
   */
  readonly indexedValues: ReadonlyMap<string, string>;
  /**
   * The GIN-indexed column holding the lower-cased values of the extensions other than `unindexed`
   * (an organization's own schemas; generated as scim_extension_values(data)); undefined: no such
   * column. An `eq` on one of their strings probes it.
   */
  readonly extensionValues?: { readonly column: string; readonly unindexed: ReadonlySet<string> };
}

export function isConstant(spec: ColumnSpec | ConstantSpec | ComputedSpec): spec is ConstantSpec {
  return 'constant' in spec;
}

export function isComputed(spec: ColumnSpec | ConstantSpec | ComputedSpec): spec is ComputedSpec {
  return 'computed' in spec;
}
