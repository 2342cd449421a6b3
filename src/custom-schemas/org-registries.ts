// Each organization's registry, built once per version of its schemas. An organization without
// schemas of its own (version 0) reads the standard registry and costs nothing here. The version comes
// with the token check, which every admin change to the organization invalidates in every process
// (auth-changes.ts): a schema change is seen by all of them as a token revocation is.
import type { Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { DB } from '../db/tables.js';
import { registryWith } from '../schema/custom-schemas.js';
import { type Registry, standardRegistry } from '../schema/registry.js';
import { listOrgSchemas } from './org-schemas.repository.js';

/** Organizations with schemas of their own whose registries a process keeps built. */
const MAX_ORGS = 10_000;

export class OrgRegistries {
  readonly #built = new LRUCache<string, { version: number; registry: Registry }>({ max: MAX_ORGS });

  async of(db: Kysely<DB>, org: { id: string; schemasVersion: number }): Promise<Registry> {
    if (org.schemasVersion === 0) return standardRegistry;
    const built = this.#built.get(org.id);
    if (built && built.version >= org.schemasVersion) return built.registry;
    const registry = registryWith((await listOrgSchemas(db, org.id)).map((s) => s.schema));
    this.#built.set(org.id, { version: org.schemasVersion, registry });
    return registry;
  }
}
