// What each scenario sends. A scenario names the organization it runs in: writes that add or remove
// resources either run in the writes organization or are undone between rounds (seed.ts resetRound),
// so that every scenario runs on the data it names.
import { randomBytes } from 'node:crypto';
import type { Request, Setup } from './measure.js';
import { CUSTOM_SCHEMA, type Seeded, userAttributes } from './seed.js';

export interface Scenario {
  readonly name: string;
  /** The organization it runs in: the seeded one or the writes organization. */
  readonly org: 'seeded' | 'writes';
  readonly setup: Setup;
  /** What its warm-up sends, when that would change the data it runs on: the same elsewhere. */
  readonly warmUp?: Setup;
}

const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
const pick = <T>(items: readonly T[]) => items[Math.floor(Math.random() * items.length)]!;
const patchBody = (Operations: unknown[]) =>
  JSON.stringify({ schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations });

export const LOOKUP = 'GET /Users?filter=userName eq (random user)';
export const CREATE = 'POST /Users';
export const PATCH_USER = 'PATCH /Users/{id} (active toggle)';
export const PUT_USER = 'PUT /Users/{id} (Okta profile push)';
export const DELETE_USER = 'DELETE /Users/{id} (deactivate)';
export const CREATE_GROUP = 'POST /Groups';
export const CREATE_GROUP_OF_3 = 'POST /Groups with 3 members';
export const addMemberName = (members: number) => `PATCH add 1 member, ${members}-member group`;
/** The same add while the group is mapped to a role (measured between mapping it and taking it away). */
export const mappedAddName = (members: number) => `${addMemberName(members)} mapped to a role`;

/** The writes measured in every round, in one scimd process (the lookup runs beside its baselines). */
export function roundScenarios(seeded: Seeded, bigGroupSize: number): Scenario[] {
  const base = `/scim/v2/${seeded.orgId}`;
  const writes = `/scim/v2/${seeded.scratch.orgId}`;
  let flip = false;
  // Each group takes the spare users in turn, from the first: every add is of a new member.
  const addMember = (group: string) => {
    let spareIndex = 0;
    return (req: Request) => {
      const user = seeded.spare[spareIndex++ % seeded.spare.length]!;
      return Object.assign(req, {
        method: 'PATCH',
        path: `${base}/Groups/${group}`,
        body: patchBody([{ op: 'add', path: 'members', value: [{ value: user.id }] }]),
      });
    };
  };
  let groupIndex = 0;
  let doomedIndex = 0;
  // Members from the end of the doomed users: DELETE removes them from the start, and a round's undo
  // brings them back.
  const memberPool = seeded.scratch.doomed.slice(-10_000);
  const newGroup = (members: number) => (req: Request) => {
    const n = ++groupIndex;
    return Object.assign(req, {
      method: 'POST',
      path: `${writes}/Groups`,
      body: JSON.stringify({
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
        displayName: `Bench group ${randomBytes(4).toString('hex')}-${n}`,
        ...(members > 0 && {
          members: Array.from({ length: members }, (_, i) => ({
            value: memberPool[(n * members + i) % memberPool.length],
          })),
        }),
      }),
    });
  };
  return [
    { name: CREATE, org: 'writes', setup: creator(writes) },
    {
      name: PATCH_USER,
      org: 'seeded',
      setup: (req) => {
        flip = !flip;
        return Object.assign(req, {
          method: 'PATCH',
          path: `${base}/Users/${pick(seeded.users).id}`,
          body: patchBody([{ op: 'replace', path: 'active', value: flip }]),
        });
      },
    },
    {
      name: PUT_USER,
      org: 'seeded',
      // Okta pushes the whole profile (with the read-only id back) when one attribute changed.
      setup: (req) => {
        const n = Math.floor(Math.random() * seeded.users.length);
        const user = seeded.users[n]!;
        const attributes = { ...userAttributes(n + 1, user.userName), title: `Title ${Math.random()}` };
        return Object.assign(req, {
          method: 'PUT',
          path: `${base}/Users/${user.id}`,
          body: JSON.stringify({ schemas: [USER_SCHEMA], id: user.id, ...attributes }),
        });
      },
    },
    {
      name: DELETE_USER,
      org: 'writes',
      setup: (req) =>
        Object.assign(req, {
          method: 'DELETE',
          path: `${writes}/Users/${seeded.scratch.doomed[doomedIndex++ % seeded.scratch.doomed.length]}`,
        }),
    },
    { name: CREATE_GROUP, org: 'writes', setup: newGroup(0) },
    { name: CREATE_GROUP_OF_3, org: 'writes', setup: newGroup(3) },
    {
      name: addMemberName(bigGroupSize),
      org: 'seeded',
      setup: addMember(seeded.bigGroup),
      warmUp: addMember(seeded.emptyGroup),
    },
    {
      name: addMemberName(10),
      org: 'seeded',
      setup: addMember(seeded.smallGroup),
      warmUp: addMember(seeded.emptyGroup),
    },
  ];
}

/** A lookup by userName of a random seeded user, as Okta and Entra look a user up before creating it. */
export function lookup(seeded: Seeded): Setup {
  const base = `/scim/v2/${seeded.orgId}`;
  return (req) => {
    req.path = `${base}/Users?filter=${encodeURIComponent(`userName eq "${pick(seeded.users).userName}"`)}`;
    return req;
  };
}

/** In the organization with a schema of its own: a lookup by userName, or by the custom costCenter. */
export function customLookup(seeded: Seeded, by: 'userName' | 'costCenter'): Setup {
  const base = `/scim/v2/${seeded.custom.orgId}`;
  return (req) => {
    const n = 1 + Math.floor(Math.random() * seeded.custom.size);
    const filter =
      by === 'userName'
        ? `userName eq "custom${n}@corp.example"`
        : `${CUSTOM_SCHEMA}:costCenter eq "CC-${n}"`;
    req.path = `${base}/Users?filter=${encodeURIComponent(filter)}`;
    return req;
  };
}

/**
 * POST /Users of a user like the seeded ones (Okta's create, with Entra's title, phone and
 * enterprise attributes), with a userName no other has used: `new-…`, which resetRound removes.
 * It runs in the writes organization, so that the scenarios after it see the seeded users only.
 */
function creator(base: string): Setup {
  let created = 0;
  const runId = randomBytes(3).toString('hex');
  return (req) => {
    const n = ++created;
    return Object.assign(req, {
      method: 'POST',
      path: `${base}/Users`,
      body: JSON.stringify({
        schemas: [USER_SCHEMA],
        ...userAttributes(n, `new-${runId}-${n}@corp.example`),
      }),
    });
  };
}

/** GET of `${base}/Users?${query}`. */
export const page =
  (base: string, query: string): Setup =>
  (req) => {
    req.path = `${base}/Users?${query}`;
    return req;
  };
