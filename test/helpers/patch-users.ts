// Users for the PATCH tests: the starting user most cases share (B) and its emails, creating and
// reading users in a tenant, and what a user stores (everything but schemas, id and meta).
import type { Tenant } from './harness.js';
import { ENTERPRISE, PATCH_OP, USER } from './scim.js';

export const MANAGER = `${ENTERPRISE}:manager`;

export type Json = Record<string, unknown>;
export type Op = Record<string, unknown>;

export const patchBody = (ops: readonly Op[]) => ({ schemas: [PATCH_OP], Operations: ops });

/** The stored attributes of a rendered user: everything but schemas, id and meta. */
export function stored(body: Json): Json {
  const { schemas: _schemas, id: _id, meta: _meta, ...rest } = body;
  return rest;
}

/** `active` is stored as true when a PATCH removes it. */
export function withActive(attributes: Json): Json {
  return { ...attributes, active: attributes.active ?? true };
}

export const schemasOf = (attributes: Json) => (attributes[ENTERPRISE] ? [USER, ENTERPRISE] : [USER]);

// The starting user of most rows, already in stored (canonical) form: POST stores it as is.
export const B = {
  externalId: 'ext-ana',
  displayName: 'Ana Ruiz',
  nickName: 'ana',
  title: 'Engineer',
  active: true,
  name: { formatted: 'Ana Ruiz', familyName: 'Ruiz', givenName: 'Ana' },
  emails: [{ primary: true, type: 'work', value: 'ana@corp.example' }],
  phoneNumbers: [{ type: 'work', value: '+1 555 0100' }],
  addresses: [
    {
      type: 'work',
      primary: true,
      streetAddress: '1 Main St',
      locality: 'Springfield',
      postalCode: '11111',
      country: 'US',
    },
  ],
  [ENTERPRISE]: { department: 'Sales', employeeNumber: '100' },
};
export const WORK = B.emails[0]!;
export const HOME = { type: 'home', value: 'ana@home.example' };
export const OTHER = { type: 'other', value: 'ana@other.example' };

let counter = 0;
/** A userName no other test of the file uses. */
export const uniqueName = (prefix = 'patch') => `${prefix}-${++counter}@corp.example`;

/** Creating and reading users in the file's tenant (a getter: it exists once the file's setup ran). */
export function userCalls(tenant: () => Tenant) {
  return {
    async createUser(attributes: Json): Promise<Json> {
      const res = await tenant()
        .post('/Users', { schemas: schemasOf(attributes), ...attributes })
        .expect(201);
      return res.body as Json;
    },
    async getUser(id: unknown): Promise<Json> {
      return (
        await tenant()
          .get(`/Users/${String(id)}`)
          .expect(200)
      ).body as Json;
    },
  };
}
