// Roles and entitlements as the admin API and the CLI see them: the environment's catalogue and an
// organization's own, its mappings from groups to roles with its default role and mode, and a user's
// effective values. Each change is one transaction with the recomputation of the users it affects.
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { isUuid } from '../db/ids.js';
import type { DB } from '../db/tables.js';
import { AdminError, invalidRequest, notFound } from '../http/admin-errors.js';
import { parseBody } from '../http/parse-body.js';
import * as orgsRepo from '../orgs/orgs.repository.js';
import type { CatalogueEntry, CatalogueInput, CatalogueKind } from './catalogue.repository.js';
import * as catalogue from './catalogue.repository.js';
import type { MappedGroup, RoleMappings, RoleUse } from './roles.repository.js';
import * as repo from './roles.repository.js';

/** Entries of one scope at most: an organization's catalogue is read whole wherever it is used. */
const MAX_ENTRIES = 500;
const MAX_MAPPINGS = 1000;

const text = (max: number) => z.string().trim().min(1).max(max);
const entryFields = {
  value: text(200),
  displayName: text(200).optional(),
  description: z.string().max(1000).optional(),
};
const bodies = {
  roles: z.strictObject({
    roles: z
      .array(
        z.strictObject({
          ...entryFields,
          priority: z.number().int().min(-1_000_000).max(1_000_000).optional(),
        }),
      )
      .max(MAX_ENTRIES),
  }),
  entitlements: z.strictObject({ entitlements: z.array(z.strictObject(entryFields)).max(MAX_ENTRIES) }),
};
const mappingsBody = z.strictObject({
  mappings: z
    .array(
      z.strictObject({
        group: z.union([
          z.strictObject({ id: z.string().refine(isUuid, 'is not a group id') }),
          z.strictObject({ displayName: text(1000) }),
        ]),
        role: text(200),
      }),
    )
    .max(MAX_MAPPINGS),
  defaultRole: text(200).nullable().optional(),
  mode: z.enum(['multiple', 'single']).optional(),
});

const quoted = (values: readonly string[]) => values.map((v) => JSON.stringify(v)).join(', ');
const kindsOf = (kind: CatalogueKind) => ({ roles: kind === 'roles', entitlements: kind === 'entitlements' });

async function existingOrg(db: Kysely<DB>, orgId: string): Promise<void> {
  if (!(await orgsRepo.findOrg(db, orgId))) throw notFound(`Organization ${orgId} not found`);
}

function parseEntries(kind: CatalogueKind, body: unknown): CatalogueInput[] {
  const parsed: { value: string; displayName?: string; description?: string; priority?: number }[] =
    kind === 'roles'
      ? parseBody(bodies.roles, body).roles
      : parseBody(bodies.entitlements, body).entitlements;
  const seen = new Set<string>();
  const twice = parsed.filter((e) => seen.size === seen.add(e.value.toLowerCase()).size).map((e) => e.value);
  if (twice.length > 0)
    throw invalidRequest(`${kind}: values are unique (in any case); given twice: ${quoted(twice)}`);
  return parsed.map((e) => ({
    value: e.value,
    displayName: e.displayName ?? e.value,
    description: e.description ?? '',
    priority: e.priority ?? 0,
  }));
}

/** The values of `before` that `after` lacks, in any case. */
function removedValues(before: readonly CatalogueEntry[], after: readonly CatalogueInput[]): string[] {
  const kept = new Set(after.map((e) => e.value.toLowerCase()));
  return before.filter((e) => !kept.has(e.value.toLowerCase())).map((e) => e.value);
}

function sameEntries(before: readonly CatalogueEntry[], after: readonly CatalogueInput[]): boolean {
  const key = (e: {
    value: string;
    displayName: string;
    description: string;
    priority?: number | undefined;
  }) => JSON.stringify([e.value, e.displayName, e.description, e.priority ?? 0]);
  const a = before.map(key).sort();
  const b = after.map(key).sort();
  return a.length === b.length && a.every((k, i) => k === b[i]);
}

const describeGroup = (group: MappedGroup) =>
  'id' in group ? `group ${group.id}` : `group ${JSON.stringify(group.displayName)} (by displayName)`;

function inUse(uses: readonly RoleUse[], scoped: boolean): AdminError {
  const shown = uses.slice(0, 10).map((u) => {
    const where = scoped ? '' : `organization ${u.orgId}: `;
    return u.group ? `${where}${describeGroup(u.group)} → ${u.role}` : `${where}default role ${u.role}`;
  });
  const more = uses.length > shown.length ? ` and ${uses.length - shown.length} more` : '';
  return new AdminError(
    409,
    'conflict',
    `Roles in use cannot be removed; change these mappings first: ${shown.join('; ')}${more}`,
  );
}

export async function environmentCatalogue(db: Kysely<DB>, kind: CatalogueKind) {
  return { [kind]: (await catalogue.scopeCatalogue(db, null, kind)).map(view) };
}

export async function putEnvironmentCatalogue(db: Kysely<DB>, kind: CatalogueKind, body: unknown) {
  const entries = parseEntries(kind, body);
  await db.transaction().execute(async (trx) => {
    await repo.lockRoles(trx, null);
    const owning = await repo.orgsOwning(
      trx,
      kind,
      entries.map((e) => e.value),
    );
    if (owning.length > 0) {
      throw new AdminError(
        409,
        'conflict',
        `${kind}: organizations ${owning.slice(0, 10).join(', ')} have values of their own that this catalogue would repeat`,
      );
    }
    const before = await catalogue.scopeCatalogue(trx, null, kind);
    if (sameEntries(before, entries)) return;
    if (kind === 'roles') {
      const uses = await repo.roleUses(trx, null, removedValues(before, entries));
      if (uses.length > 0) throw inUse(uses, false);
    }
    await catalogue.replaceScopeCatalogue(trx, null, kind, entries, new Date());
    await repo.refreshEveryOrg(trx, kindsOf(kind));
  });
  return environmentCatalogue(db, kind);
}

/** The organization's whole catalogue of the kind, each entry with its scope. */
export async function orgCatalogue(db: Kysely<DB>, orgId: string, kind: CatalogueKind) {
  await existingOrg(db, orgId);
  return { [kind]: (await catalogue.effectiveCatalogue(db, orgId, kind)).map(view) };
}

export async function putOrgCatalogue(db: Kysely<DB>, orgId: string, kind: CatalogueKind, body: unknown) {
  await existingOrg(db, orgId);
  const entries = parseEntries(kind, body);
  await db.transaction().execute(async (trx) => {
    await repo.lockRoles(trx, orgId);
    const environment = new Set(
      (await catalogue.scopeCatalogue(trx, null, kind)).map((e) => e.value.toLowerCase()),
    );
    const repeated = entries.filter((e) => environment.has(e.value.toLowerCase())).map((e) => e.value);
    if (repeated.length > 0) {
      throw invalidRequest(`${kind}: already in the environment's catalogue: ${quoted(repeated)}`);
    }
    const before = await catalogue.scopeCatalogue(trx, orgId, kind);
    if (sameEntries(before, entries)) return;
    if (kind === 'roles') {
      const uses = await repo.roleUses(trx, orgId, removedValues(before, entries));
      if (uses.length > 0) throw inUse(uses, true);
    }
    await catalogue.replaceScopeCatalogue(trx, orgId, kind, entries, new Date());
    await repo.refreshOrg(trx, orgId, null, kindsOf(kind));
  });
  return orgCatalogue(db, orgId, kind);
}

function view(entry: CatalogueEntry) {
  const { id: _id, ...shown } = entry;
  return shown;
}

export async function mappings(db: Kysely<DB>, orgId: string): Promise<RoleMappings> {
  await existingOrg(db, orgId);
  return repo.readMappings(db, orgId);
}

/**
 * Replaces the organization's mappings, default role and mode; recomputes the members of the groups
 * mapped before or after (every user when the default or the mode changed) and tells the feed.
 */
export async function putMappings(db: Kysely<DB>, orgId: string, body: unknown): Promise<RoleMappings> {
  await existingOrg(db, orgId);
  const given = parseBody(mappingsBody, body);
  await db.transaction().execute(async (trx) => {
    await repo.lockRoles(trx, orgId);
    const known = new Map(
      (await catalogue.effectiveCatalogue(trx, orgId, 'roles')).map((e) => [e.value.toLowerCase(), e.value]),
    );
    const named = [...given.mappings.map((m) => m.role), ...(given.defaultRole ? [given.defaultRole] : [])];
    const unknown = [...new Set(named.filter((r) => !known.has(r.toLowerCase())))];
    if (unknown.length > 0) {
      throw invalidRequest(`Roles not in the organization's catalogue: ${quoted(unknown)}`);
    }
    const ids = given.mappings.flatMap((m) => ('id' in m.group ? [m.group.id] : []));
    const groups = await repo.existingGroups(trx, orgId, ids);
    const missing = [...new Set(ids.filter((id) => !groups.has(id)))];
    if (missing.length > 0) {
      throw invalidRequest(
        `No groups of the organization with these ids (name a group that has not arrived by displayName): ${missing.join(', ')}`,
      );
    }
    const after: RoleMappings = {
      mappings: given.mappings.map((m) => ({ group: m.group, role: known.get(m.role.toLowerCase())! })),
      defaultRole: given.defaultRole ? known.get(given.defaultRole.toLowerCase())! : null,
      mode: given.mode ?? 'multiple',
    };
    const before = await repo.readMappings(trx, orgId);
    if (JSON.stringify(before) === JSON.stringify(after)) return;
    await repo.writeMappings(trx, orgId, after, new Date());
    const everyone = before.defaultRole !== after.defaultRole || before.mode !== after.mode;
    const mapped = [...before.mappings, ...after.mappings].map((m) => m.group);
    await repo.refreshOrg(
      trx,
      orgId,
      everyone
        ? null
        : {
            ids: mapped.flatMap((g) => ('id' in g ? [g.id] : [])),
            names: mapped.flatMap((g) => ('displayName' in g ? [g.displayName] : [])),
          },
      { roles: true, entitlements: false },
    );
    await repo.recordMappingsUpdated(trx, orgId, after);
  });
  return repo.readMappings(db, orgId);
}

export async function userAccess(db: Kysely<DB>, orgId: string, userId: string) {
  await existingOrg(db, orgId);
  const found = isUuid(userId) ? await repo.userAccess(db, orgId, userId) : undefined;
  if (!found) throw notFound(`Organization ${orgId} has no user ${userId}`);
  return found;
}
