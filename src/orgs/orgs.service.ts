// Organizations, as the admin API, the console and the CLI see them.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { DB } from '../db/tables.js';
import { isStorableText, UNSTORABLE_TEXT_MESSAGE } from '../db/text.js';
import { notFound } from '../http/admin-errors.js';
import { parseBody } from '../http/parse-body.js';
import * as orgsRepo from './orgs.repository.js';

const DEPROVISIONING_MODES = ['deactivate', 'anonymize', 'delete'] as const;

const storableText = z.string().refine(isStorableText, UNSTORABLE_TEXT_MESSAGE);
const orgName = storableText.pipe(z.string().trim().min(1, 'must not be empty').max(200));
const createOrgBody = z.strictObject({
  name: orgName,
  groupSync: z.boolean().optional(),
  deprovisioning: z.enum(DEPROVISIONING_MODES).optional(),
});
const updateOrgBody = z
  .strictObject({
    name: orgName.optional(),
    groupSync: z.boolean().optional(),
    deprovisioning: z.enum(DEPROVISIONING_MODES).optional(),
  })
  .refine((b) => Object.keys(b).length > 0, 'name, groupSync or deprovisioning is required');
export interface OrgView {
  id: string;
  name: string;
  scimBaseUrl: string;
  groupSync: boolean;
  deprovisioning: string;
  createdAt: string;
  updatedAt: string;
}

export function renderOrg(org: orgsRepo.StoredOrg, publicUrl: string): OrgView {
  return {
    id: org.id,
    name: org.name,
    scimBaseUrl: `${publicUrl}/scim/v2/${org.id}`,
    groupSync: org.groupSync,
    deprovisioning: org.deprovisioning,
    createdAt: org.createdAt.toISOString(),
    updatedAt: org.updatedAt.toISOString(),
  };
}

export async function createOrg(db: Kysely<DB>, body: unknown): Promise<orgsRepo.StoredOrg> {
  const input = parseBody(createOrgBody, body);
  return orgsRepo.insertOrg(
    db,
    {
      id: randomUUID(),
      name: input.name,
      groupSync: input.groupSync ?? false,
      deprovisioning: input.deprovisioning ?? 'deactivate',
    },
    new Date(),
  );
}

export async function getOrg(db: Kysely<DB>, id: string): Promise<orgsRepo.StoredOrg> {
  const org = await orgsRepo.findOrg(db, id);
  if (!org) throw notFound(`Organization ${id} not found`);
  return org;
}

export const listOrgs = orgsRepo.listOrgs;

export async function updateOrg(db: Kysely<DB>, id: string, body: unknown): Promise<orgsRepo.StoredOrg> {
  const input = parseBody(updateOrgBody, body);
  const org = await orgsRepo.updateOrg(db, id, input, new Date());
  if (!org) throw notFound(`Organization ${id} not found`);
  return org;
}

export async function deleteOrg(db: Kysely<DB>, id: string): Promise<void> {
  if (!(await orgsRepo.deleteOrg(db, id))) throw notFound(`Organization ${id} not found`);
}
