// The Patcher: RFC 7644 §3.5.2 operations applied one at a time to a resource's stored attributes
// (core at the top, each extension under its URN), or gathered as a merge patch of them. Paths
// resolve in patch-path.ts, values take their attribute's shape in patch-value.ts.
import { matchesFilter } from '../filter/evaluate.js';
import type { ResolvedFilter } from '../filter/resolve.js';
import { InvalidPathError, InvalidValueError, MutabilityError, NoTargetError } from '../http/scim-errors.js';
import { isObject, type Json, sameJson } from '../json.js';
import type { AttributeDef, ResourceTypeDef } from '../schema/types.js';
import { type AttributeTarget, type FilteredTarget, resolvePath, type Target } from './patch-path.js';
import type { PatchOperation } from './patch-request.js';
import { canonicalObject, elementFromFilter, keepOnePrimary, REMOVE, shapeValue } from './patch-value.js';

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

export function clone<T>(value: T): T {
  return structuredClone(value);
}

/** In merge mode: this operation's result depends on the stored resource. */
export class NeedsStoredResource extends Error {}

/**
 * Applies operations to `attributes`. In `merge` mode `attributes` starts empty and becomes an
 * RFC 7396 merge patch of the stored resource (null removes); an operation whose result would
 * depend on the stored values throws NeedsStoredResource.
 */
export class Patcher {
  readonly deferred: DeferredOperation[] = [];
  constructor(
    private readonly type: ResourceTypeDef,
    private readonly attributes: Json,
    private readonly options: PatchOptions,
    private readonly merge = false,
  ) {}

  private needsStored(when = true): void {
    if (this.merge && when) throw new NeedsStoredResource();
  }

  /** Unassigns `attr` in `holder`: deleted, or in merge mode null (a required one needs the check on the whole). */
  private unset(holder: Json, attr: AttributeDef): void {
    if (!this.merge) {
      delete holder[attr.name];
      return;
    }
    this.needsStored(attr.required);
    holder[attr.name] = null;
  }

  private holder(extension: string | undefined, create: boolean): Json | undefined {
    if (!extension) return this.attributes;
    // Removed earlier in this request: what follows starts from nothing, which a merge cannot say.
    this.needsStored(this.attributes[extension] === null);
    let holder = this.attributes[extension];
    if (!isObject(holder)) {
      // In merge mode the stored resource may hold the extension this request has not named yet.
      if (!create && !this.merge) return undefined;
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
      this.needsStored();
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
      this.unset(holder, attr);
      return;
    }
    this.checkImmutable(attr, holder[attr.name], value);
    if (attr.multiValued) {
      this.needsStored();
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
    this.needsStored(holder[attr.name] === null);
    if (attr.type === 'complex' && isObject(value) && isObject(holder[attr.name])) {
      // add and replace on a complex attribute set the sub-attributes given and keep the rest.
      holder[attr.name] = { ...(holder[attr.name] as Json), ...value };
      return;
    }
    holder[attr.name] = value;
  }

  private removeWhole(holder: Json, attr: AttributeDef, operation: PatchOperation): void {
    const current = holder[attr.name];
    this.needsStored(attr.multiValued);
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
    this.unset(holder, attr);
  }

  private applySub(target: AttributeTarget, sub: AttributeDef, operation: PatchOperation): void {
    const attr = target.attribute;
    if (sub.mutability === 'readOnly') return;
    const holder = this.holder(target.extension, operation.op !== 'remove');
    if (!holder) return;
    const value = operation.op === 'remove' ? REMOVE : shapeValue(sub, operation.value);
    if (attr.multiValued) {
      this.needsStored();
      // `emails.value` without a filter: every element.
      const items = Array.isArray(holder[attr.name]) ? (holder[attr.name] as Json[]) : [];
      for (const item of items) this.setSub(item, sub, value);
      return;
    }
    this.needsStored(holder[attr.name] === null);
    const current = isObject(holder[attr.name]) ? (holder[attr.name] as Json) : undefined;
    if (!current) {
      if (value === REMOVE) {
        if (!this.merge) return;
        const removal: Json = {};
        this.unset(removal, sub);
        holder[attr.name] = removal;
        return;
      }
      holder[attr.name] = { [sub.name]: value };
      return;
    }
    this.setSub(current, sub, value);
    if (Object.keys(current).length === 0) delete holder[attr.name];
  }

  private setSub(item: Json, sub: AttributeDef, value: unknown): void {
    if (value === REMOVE) {
      this.unset(item, sub);
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
      if (this.merge) this.attributes[schema] = null;
      else delete this.attributes[schema];
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
    this.needsStored(attr.mutability === 'immutable');
    if (attr.mutability !== 'immutable' || before === undefined || sameJson(before, after)) return;
    throw new MutabilityError(`${attr.name} is immutable`);
  }
}
