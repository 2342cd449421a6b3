// Each organization's discovery documents as JSON text, built once per version of its schemas and
// per which of its catalogues hold entries: an organization with many large schemas must not make
// every /Schemas read render megabytes again (the event loop every organization shares would wait).
import { LRUCache } from 'lru-cache';
import { listResponse } from '../resources/list-response.js';
import type { CatalogueKinds } from '../roles/catalogue-kinds.repository.js';
import type { Registry } from '../schema/registry.js';
import {
  type CatalogueResourceType,
  entitlementResourceType,
  roleResourceType,
} from '../schema/roles-entitlements.js';
import { renderResourceType, renderSchema } from './discovery.js';

/** The Role and Entitlement resource types of an organization: those whose catalogue holds entries. */
export function catalogueTypesOf(kinds: CatalogueKinds): CatalogueResourceType[] {
  return [
    ...(kinds.roles ? [roleResourceType] : []),
    ...(kinds.entitlements ? [entitlementResourceType] : []),
  ];
}

/** The bytes of built documents a process keeps, across organizations. */
const MAX_BYTES = 128 * 1024 * 1024;

/** An organization's documents for one registry: the lists at once, single ones as they are asked. */
class Built {
  readonly schemas: Buffer;
  readonly resourceTypes: Buffer;
  readonly #single = new Map<string, Buffer>();

  constructor(
    readonly registry: Registry,
    readonly kinds: CatalogueKinds,
    private readonly baseUrl: string,
  ) {
    const catalogues = catalogueTypesOf(kinds);
    const schemas = [...registry.schemas, ...catalogues.map((t) => t.definition)].map((s) =>
      renderSchema(s, baseUrl),
    );
    this.schemas = json(listResponse(schemas, schemas.length, 1));
    const types = [...Object.values(registry.types), ...catalogues].map((t) =>
      renderResourceType(t, baseUrl),
    );
    this.resourceTypes = json(listResponse(types, types.length, 1));
  }

  /** A single document, by a key of its kind and id, rendered by `render` the first time. */
  single(key: string, render: (baseUrl: string) => unknown): Buffer {
    let built = this.#single.get(key);
    if (!built) {
      built = json(render(this.baseUrl));
      this.#single.set(key, built);
    }
    return built;
  }

  get size(): number {
    let size = this.schemas.length + this.resourceTypes.length;
    for (const built of this.#single.values()) size += built.length;
    return size;
  }
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value));

export class DiscoveryDocuments {
  readonly #built = new LRUCache<string, Built>({ maxSize: MAX_BYTES, sizeCalculation: (b) => b.size || 1 });

  /**
   * The documents of the organization at `baseUrl` with `registry` and catalogues of `kinds`, built
   * again when its schemas changed or a catalogue became empty or not.
   */
  of(baseUrl: string, registry: Registry, kinds: CatalogueKinds): Built {
    const built = this.#built.get(baseUrl);
    if (
      built?.registry === registry &&
      built.kinds.roles === kinds.roles &&
      built.kinds.entitlements === kinds.entitlements
    )
      return built;
    const fresh = new Built(registry, kinds, baseUrl);
    this.#built.set(baseUrl, fresh);
    return fresh;
  }
}
