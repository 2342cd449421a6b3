// applyPatch: RFC 7644 §3.5.2 over a resource's stored attributes (core at the top, each extension
// under its URN), with no database. Operations apply in order; the first that fails stops everything
// and names its index. Attributes held outside the resource (group members, as rows) are handed back
// as deferred operations for the caller to apply. Paths resolve in patch-path.ts, values take their
// attribute's shape in patch-value.ts.
import { matchesFilter } from '../filter/evaluate.js';
import type { ResolvedFilter } from '../filter/resolve.js';
import {
  InvalidPathError,
  InvalidValueError,
  MutabilityError,
  NoTargetError,
  ScimError,
} from '../http/scim-errors.js';
import { isObject, type Json, sameJson } from '../json.js';
import type { AttributeDef, ResourceTypeDef } from '../schema/types.js';
import { type AttributeTarget, type FilteredTarget, resolvePath, type Target } from './patch-path.js';
import type { PatchOperation } from './patch-request.js';
import { canonicalObject, elementFromFilter, keepOnePrimary, REMOVE, shapeValue } from './patch-value.js';
import { type ScimResource, validateResource } from './validate.js';

export interface PatchOptions {
  /** The resource's id: a PATCH may repeat it (Okta does), not change it. */
  readonly id: string;
  /** Multi-valued attributes stored outside the resource (`members`): their operations are deferred. */
  readonly relations?: ReadonlySet<string>;
}

export interface DeferredOperation {
  readonly op: PatchOperation['op'];
  readonly attribute: AttributeDef;
  /** The element filter of a value path (`members[value eq "x"]`), if any. */
  readonly filter?: ResolvedFilter;
  readonly value?: unknown;
  readonly index: number;
}

export interface PatchResult {
  /** The validated attributes after every operation. */
  readonly attributes: ScimResource;
  readonly deferred: readonly DeferredOperation[];
}

function clone<T>(value: T): T {
  return structuredClone(value);
}

class Patcher {
  readonly deferred: DeferredOperation[] = [];
  constructor(
    private readonly type: ResourceTypeDef,
    private readonly attributes: Json,
    private readonly options: PatchOptions,
  ) {}

  private holder(extension: string | undefined, create: boolean): Json | undefined {
    if (!extension) return this.attributes;
    let holder = this.attributes[extension];
    if (!isObject(holder)) {
      if (!create) return undefined;
      holder = {};
      this.attributes[extension] = holder;
    }
    return holder as Json;
  }

  apply(operation: PatchOperation): void {
    if (operation.path === undefined) {
      this.applyPathless(operation);
      return;
    }
    this.applyAt(resolvePath(this.type, operation.path), operation);
  }

  /** No path: the value is an object of attributes (plain, dotted, or URN-qualified keys). */
  private applyPathless(operation: PatchOperation): void {
    if (operation.op === 'remove') throw new NoTargetError('remove needs a path');
    if (!isObject(operation.value)) {
      throw new InvalidValueError(
        `${operation.op} without a path needs an object of attributes as its value`,
      );
    }
    for (const [key, value] of Object.entries(operation.value)) {
      const lower = key.toLowerCase();
      // The core schema URN as a key holds core attributes.
      if (lower === this.type.schema.toLowerCase() && isObject(value)) {
        for (const [k, v] of Object.entries(value)) this.applyKey(operation, k, v);
        continue;
      }
      this.applyKey(operation, key, value);
    }
  }

  private applyKey(operation: PatchOperation, key: string, value: unknown): void {
    let target: Target;
    try {
      target = resolvePath(this.type, key);
    } catch (error) {
      // Unknown attributes in a value object are ignored, as they are in POST and PUT.
      if (error instanceof InvalidPathError) return;
      throw error;
    }
    this.applyAt(target, { ...operation, value }, true);
  }

  private applyAt(target: Target, operation: PatchOperation, pathless = false): void {
    if (target.kind === 'extension') {
      this.applyExtension(target.schema, operation);
      return;
    }
    const attr = target.attribute;
    if (attr.mutability === 'readOnly') {
      this.readOnly(attr, operation, pathless);
      return;
    }
    if (!target.extension && this.options.relations?.has(attr.name)) {
      const shaped = 'value' in operation ? shapeValue(attr, operation.value) : undefined;
      // A null value (add/replace) leaves the attribute unassigned: every member goes.
      const op = shaped === REMOVE ? 'remove' : operation.op;
      this.deferred.push({
        op,
        attribute: attr,
        ...(target.filter ? { filter: target.filter.resolved } : {}),
        ...(shaped !== undefined && shaped !== REMOVE && operation.op !== 'remove' ? { value: shaped } : {}),
        ...(operation.op === 'remove' && shaped !== undefined && shaped !== REMOVE ? { value: shaped } : {}),
        index: operation.index,
      });
      return;
    }
    if (target.filter) {
      this.applyFiltered({ ...target, filter: target.filter }, operation);
      return;
    }
    if (target.sub) {
      this.applySub(target, target.sub, operation);
      return;
    }
    const holder = this.holder(target.extension, operation.op !== 'remove');
    if (!holder) return;
    if (operation.op === 'remove') {
      this.checkRemovable(attr);
      this.removeWhole(holder, attr, operation);
      return;
    }
    const value = shapeValue(attr, operation.value);
    if (value === REMOVE) {
      this.checkRemovable(attr);
      delete holder[attr.name];
      return;
    }
    this.checkImmutable(attr, holder[attr.name], value);
    if (attr.multiValued) {
      const items = (value as Json[]).map(clone);
      if (operation.op === 'replace') {
        holder[attr.name] = items;
        keepOnePrimary(items, items);
        return;
      }
      const current = Array.isArray(holder[attr.name]) ? (holder[attr.name] as Json[]) : [];
      // add appends what is not there yet (RFC 7644 §3.5.2.1).
      const fresh = items.filter((item) => !current.some((c) => sameJson(c, item)));
      const merged = [...current, ...fresh];
      keepOnePrimary(merged, fresh);
      holder[attr.name] = merged;
      return;
    }
    if (attr.type === 'complex' && isObject(value) && isObject(holder[attr.name])) {
      // add and replace on a complex attribute set the sub-attributes given and keep the rest.
      holder[attr.name] = { ...(holder[attr.name] as Json), ...value };
      return;
    }
    holder[attr.name] = value;
  }

  private removeWhole(holder: Json, attr: AttributeDef, operation: PatchOperation): void {
    const current = holder[attr.name];
    // Entra removes chosen elements with `remove` + a value list (`members`, `emails`): only those go.
    if (
      attr.multiValued &&
      'value' in operation &&
      operation.value !== undefined &&
      operation.value !== null
    ) {
      const gone = shapeValue(attr, operation.value) as unknown[];
      if (!Array.isArray(current)) return;
      const matches = (item: unknown, g: unknown) =>
        sameJson(item, g) ||
        (isObject(item) &&
          isObject(g) &&
          'value' in g &&
          Object.keys(g).every((k) => k === '$ref' || sameJson(item[k], g[k])));
      holder[attr.name] = current.filter((item) => !gone.some((g) => matches(item, g)));
      return;
    }
    this.checkImmutable(attr, current, undefined);
    delete holder[attr.name];
  }

  private applySub(target: AttributeTarget, sub: AttributeDef, operation: PatchOperation): void {
    const attr = target.attribute;
    if (sub.mutability === 'readOnly') return;
    const holder = this.holder(target.extension, operation.op !== 'remove');
    if (!holder) return;
    const value = operation.op === 'remove' ? REMOVE : shapeValue(sub, operation.value);
    if (attr.multiValued) {
      // `emails.value` without a filter: every element.
      const items = Array.isArray(holder[attr.name]) ? (holder[attr.name] as Json[]) : [];
      for (const item of items) this.setSub(item, sub, value);
      return;
    }
    const current = isObject(holder[attr.name]) ? (holder[attr.name] as Json) : undefined;
    if (!current) {
      if (value === REMOVE) return;
      holder[attr.name] = { [sub.name]: value };
      return;
    }
    this.setSub(current, sub, value);
    if (Object.keys(current).length === 0) delete holder[attr.name];
  }

  private setSub(item: Json, sub: AttributeDef, value: unknown): void {
    if (value === REMOVE) {
      delete item[sub.name];
      return;
    }
    this.checkImmutable(sub, item[sub.name], value);
    item[sub.name] = value;
  }

  private applyFiltered(target: FilteredTarget, operation: PatchOperation): void {
    const attr = target.attribute;
    const holder = this.holder(target.extension, operation.op !== 'remove');
    if (!holder) return;
    const items = Array.isArray(holder[attr.name]) ? (holder[attr.name] as Json[]) : [];
    const matched = items.filter(
      (item) => isObject(item) && matchesFilter(target.filter.resolved, this.attributes, item),
    );
    if (operation.op === 'remove') {
      if (target.sub) for (const item of matched) delete item[target.sub.name];
      else holder[attr.name] = items.filter((item) => !matched.includes(item));
      return;
    }
    const value = target.sub
      ? shapeValue(target.sub, operation.value)
      : shapeValue({ ...attr, multiValued: false }, operation.value);
    if (matched.length === 0) {
      // Entra: a filtered add or replace that matches nothing creates the element the filter describes.
      const seed = elementFromFilter(target.filter.ast);
      if (!seed) throw new NoTargetError(`No ${attr.name} element matches the filter of the path`);
      const created: Json = canonicalObject(seed, attr.subAttributes ?? []);
      if (value !== REMOVE) {
        if (target.sub) created[target.sub.name] = value;
        else if (isObject(value)) Object.assign(created, value);
      }
      const next = [...items, created];
      keepOnePrimary(next, [created]);
      holder[attr.name] = next;
      return;
    }
    for (const item of matched) {
      if (target.sub) this.setSub(item, target.sub, value);
      else if (value === REMOVE) holder[attr.name] = items.filter((i) => i !== item);
      // RFC 7644 §3.5.2.3: replacing a complex value sets the sub-attributes given; the others are
      // left unchanged (an email keeps its type when only its value is replaced).
      else if (isObject(value)) Object.assign(item, value);
    }
    const current = holder[attr.name] as Json[];
    keepOnePrimary(current, target.sub?.name === 'primary' || isObject(value) ? matched : []);
  }

  private applyExtension(schema: string, operation: PatchOperation): void {
    if (operation.op === 'remove') {
      delete this.attributes[schema];
      return;
    }
    if (!isObject(operation.value))
      throw new InvalidValueError(`${schema} takes an object of its attributes`);
    for (const [key, value] of Object.entries(operation.value)) {
      this.applyKey(operation, `${schema}:${key}`, value);
    }
  }

  /**
   * readOnly attributes inside a pathless value are ignored: IdPs send them innocently (Okta repeats
   * `id` in a pathless replace; `meta` and `groups` come back in whole-resource values). Changing
   * `id`, or naming a readOnly attribute as the path of an operation, is refused (RFC 7644 §3.5.2).
   */
  private readOnly(attr: AttributeDef, operation: PatchOperation, pathless: boolean): void {
    const sameId = attr.name === 'id' && operation.op !== 'remove' && operation.value === this.options.id;
    if (sameId || (pathless && attr.name !== 'id')) return;
    throw new MutabilityError(
      `${attr.name} is readOnly and cannot be ${attr.name === 'id' ? 'changed' : 'patched'}`,
    );
  }

  /** RFC 7643 §2.2 immutable: may be set once, then not changed. */
  /** An attribute with a default is never unassigned: removing it would silently mean the default. */
  private checkRemovable(attr: AttributeDef): void {
    if (attr.defaultValue === undefined) return;
    throw new InvalidValueError(
      `${attr.name} cannot be removed: it is ${attr.defaultValue} unless set; replace it with the value you mean`,
    );
  }

  private checkImmutable(attr: AttributeDef, before: unknown, after: unknown): void {
    if (attr.mutability !== 'immutable' || before === undefined || sameJson(before, after)) return;
    throw new MutabilityError(`${attr.name} is immutable`);
  }
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
      throw new ScimError(error.status, `${label(operation)}: ${error.message}`, error.scimType);
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
