// applyPatch: RFC 7644 §3.5.2 over a resource's stored attributes, with no database. Operations
// apply in order (patcher.ts); the first that fails stops everything and names its index. Attributes
// held outside the resource (group members, as rows) are handed back as deferred operations for the
// caller to apply. mergePatchOf gives the operations as a merge patch, and relationOperationsOf the
// deferred ones of a PATCH that changes nothing else, each for a write without a read.
import { InvalidValueError, ScimError } from '../http/scim-errors.js';
import { isObject, type Json } from '../json.js';
import type { ResourceTypeDef } from '../schema/types.js';
import type { PatchOperation } from './patch-request.js';
import { clone, type DeferredOperation, NeedsStoredResource, Patcher, type PatchOptions } from './patcher.js';
import { type ScimResource, validateResource } from './validate.js';

export type { DeferredOperation, PatchOptions } from './patcher.js';

export interface PatchResult {
  /** The validated attributes after every operation. */
  readonly attributes: ScimResource;
  readonly deferred: readonly DeferredOperation[];
}

/** How an error names an operation: `Operations[2] (replace emails[type eq "work"].value)`. */
function label(operation: PatchOperation): string {
  return `Operations[${operation.index}] (${operation.op}${operation.path ? ` ${operation.path}` : ''})`;
}

/**
 * Applies the operations, in order, to a copy of the attributes. `stopAfter` may end the run early:
 * the operation after which it said so comes back as `stoppedAt`.
 */
function applyOperations(
  attributes: ScimResource,
  operations: readonly PatchOperation[],
  type: ResourceTypeDef,
  options: PatchOptions,
  stopAfter?: (working: Json) => boolean,
): { working: Json; patcher: Patcher; stoppedAt?: PatchOperation } {
  const working = clone(attributes) as Json;
  const patcher = new Patcher(type, working, options);
  for (const operation of operations) {
    try {
      patcher.apply(operation);
    } catch (error) {
      if (!(error instanceof ScimError)) throw error;
      throw new ScimError(
        error.status,
        `${label(operation)}: ${error.message}`,
        error.scimType,
        error.reason,
      );
    }
    if (stopAfter?.(working)) return { working, patcher, stoppedAt: operation };
  }
  return { working, patcher };
}

function isValid(type: ResourceTypeDef, attributes: Json): boolean {
  try {
    validateResource(type, 'replace', attributes);
    return true;
  } catch {
    return false;
  }
}

export function applyPatch(
  attributes: ScimResource,
  operations: readonly PatchOperation[],
  type: ResourceTypeDef,
  options: PatchOptions,
): PatchResult {
  const { working, patcher } = applyOperations(attributes, operations, type, options);
  // The result must be a valid resource: types, required attributes, string booleans coerced.
  let validated: ScimResource;
  try {
    validated = validateResource(type, 'replace', working);
  } catch (error) {
    if (!(error instanceof ScimError)) throw error;
    // Name the operation after which the resource first became invalid: replay the operations,
    // checking after each (only on this error path).
    const { stoppedAt } = applyOperations(attributes, operations, type, options, (w) => !isValid(type, w));
    throw new InvalidValueError(`${stoppedAt ? label(stoppedAt) : 'After the operations'}: ${error.message}`);
  }
  return { attributes: validated, deferred: patcher.deferred };
}

/**
 * The operations as one RFC 7396 merge patch of the stored attributes (null removes), validated,
 * when what they write does not depend on the stored values: single-valued attributes and their
 * sub-attributes set or removed, no filter, nothing multi-valued, immutable or required removed.
 * Otherwise, or when an operation fails, undefined: the caller reads the resource and runs
 * applyPatch, which decides and words any error.
 */
export function mergePatchOf(
  operations: readonly PatchOperation[],
  type: ResourceTypeDef,
  options: PatchOptions,
): Json | undefined {
  const patch: Json = {};
  const patcher = new Patcher(type, patch, options, true);
  try {
    for (const operation of operations) patcher.apply(operation);
    if (patcher.deferred.length > 0) return undefined;
    return withRemovals(patch, validateResource(type, 'merge', patch) ?? {});
  } catch (error) {
    if (error instanceof NeedsStoredResource || error instanceof ScimError) return undefined;
    throw error;
  }
}

/**
 * The validated values with the patch's removals (nulls) put back; undefined if validation
 * unassigned a value the patch sets (`[]` for a single value), which only the stored resource can apply.
 */
function withRemovals(patch: Json, validated: Json): Json | undefined {
  const out: Json = { ...validated };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) out[key] = null;
    else if (isObject(value)) {
      const inner = withRemovals(value, isObject(validated[key]) ? (validated[key] as Json) : {});
      if (!inner) return undefined;
      out[key] = inner;
    } else if (validated[key] === undefined) return undefined;
  }
  return out;
}

/**
 * The deferred operations (on `relations`), when the operations change nothing else: such a PATCH
 * needs no read of the resource. Otherwise, or when an operation fails, undefined: the caller reads
 * the resource and runs applyPatch, which decides and words any error.
 */
export function relationOperationsOf(
  operations: readonly PatchOperation[],
  type: ResourceTypeDef,
  options: PatchOptions,
): readonly DeferredOperation[] | undefined {
  const patch: Json = {};
  const patcher = new Patcher(type, patch, options, true);
  try {
    for (const operation of operations) patcher.apply(operation);
  } catch (error) {
    if (error instanceof NeedsStoredResource || error instanceof ScimError) return undefined;
    throw error;
  }
  return Object.keys(patch).length === 0 ? patcher.deferred : undefined;
}
