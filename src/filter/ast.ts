// The filter AST (RFC 7644 §3.4.2.2): a readonly tagged union. The parser produces it with attribute
// paths as written; resolve() ties every path to the schema registry.

export type CompareOp = 'eq' | 'ne' | 'co' | 'sw' | 'ew' | 'gt' | 'lt' | 'ge' | 'le';
export const COMPARE_OPS: readonly CompareOp[] = ['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'lt', 'ge', 'le'];

export type FilterValue = string | number | boolean | null;

/** An attribute path as written: `[uri:]name[.sub]`. */
export interface PathText {
  readonly uri?: string;
  readonly name: string;
  readonly sub?: string;
  /** The path as it appeared, for error messages. */
  readonly text: string;
}

export type Filter =
  | {
      readonly kind: 'compare';
      readonly path: PathText;
      readonly op: CompareOp;
      readonly value: FilterValue;
      /** A number as written, so that `externalId eq 1.50` compares "1.50", not "1.5". */
      readonly bare?: string;
    }
  | { readonly kind: 'present'; readonly path: PathText }
  | { readonly kind: 'and' | 'or'; readonly filters: readonly Filter[] }
  | { readonly kind: 'not'; readonly filter: Filter }
  /** `attr[filter]`: the inner filter holds for one and the same element of a multi-valued attribute. */
  | { readonly kind: 'valuePath'; readonly path: PathText; readonly filter: Filter };
