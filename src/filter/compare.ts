// How a filter compares a value with an attribute's (RFC 7644 §3.4.2.2), in memory: what the SQL
// compiler does in Postgres, for the evaluator and for what the planner decides from the filter alone.
import type { CompareOp } from './ast.js';

/** A filter's value, coerced to the type of the attribute it is compared with. */
export type Comparable = string | number | boolean | Date;

/** Code point order, as Postgres's "C" collation compares. */
function compareText(a: string, b: string): number {
  if (a === b) return 0;
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/**
 * `left op right` for a present value. Strings fold case unless caseExact (ASCII and beyond, as
 * JavaScript folds; the database folds as its collation does, which agrees on ASCII).
 */
export function compareValues(left: unknown, op: CompareOp, right: Comparable, caseExact: boolean): boolean {
  if (left === undefined || left === null) return false;
  if (right instanceof Date) {
    const time = typeof left === 'string' ? Date.parse(left) : Number.NaN;
    if (Number.isNaN(time)) return false;
    return ordered(time - right.getTime(), op);
  }
  if (typeof right === 'boolean') {
    if (typeof left !== 'boolean') return false;
    if (op === 'eq') return left === right;
    if (op === 'ne') return left !== right;
    return false;
  }
  if (typeof right === 'number') {
    if (typeof left !== 'number') return false;
    return ordered(left - right, op);
  }
  if (typeof left !== 'string') return false;
  const a = caseExact ? left : left.toLowerCase();
  const b = caseExact ? right : right.toLowerCase();
  switch (op) {
    case 'co':
      return a.includes(b);
    case 'sw':
      return a.startsWith(b);
    case 'ew':
      return a.endsWith(b);
    default:
      return ordered(compareText(a, b), op);
  }
}

function ordered(difference: number, op: CompareOp): boolean {
  switch (op) {
    case 'eq':
      return difference === 0;
    case 'ne':
      return difference !== 0;
    case 'gt':
      return difference > 0;
    case 'ge':
      return difference >= 0;
    case 'lt':
      return difference < 0;
    case 'le':
      return difference <= 0;
    default:
      return false;
  }
}
