// Each organization's discovery documents as JSON text, built once per version of its schemas: an
// organization with many large schemas must not make every /Schemas read render megabytes again
// (the event loop every organization shares would wait on it).
import { LRUCache } from 'lru-cache';
import { listResponse } from '../resources/list-response.js';
import type { Registry } from '../schema/registry.js';
import { renderResourceType, renderSchema } from './discovery.js';

/** The bytes of built documents a process keeps, across organizations. */
const MAX_BYTES = 128 * 1024 * 1024;

/** An organization's documents for one registry: the lists at once, single ones as they are asked. */
class Built {
  readonly schemas: Buffer;
  readonly resourceTypes: Buffer;
  readonly #single = new Map<string, Buffer>();

  constructor(
    readonly registry: Registry,
    private readonly baseUrl: string,
  ) {
    const schemas = registry.schemas.map((s) => renderSchema(s, baseUrl));
    this.schemas = json(listResponse(schemas, schemas.length, 1));
    const types = Object.values(registry.types).map((t) => renderResourceType(t, baseUrl));
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

  /** The documents of the organization at `baseUrl` with `registry`, built when its schemas changed. */
  of(baseUrl: string, registry: Registry): Built {
    const built = this.#built.get(baseUrl);
    if (built?.registry === registry) return built;
    const fresh = new Built(registry, baseUrl);
    this.#built.set(baseUrl, fresh);
    return fresh;
  }
}
