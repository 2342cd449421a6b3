// Concurrent creates of one organization's users go to Postgres together. While a statement of the
// organization's creates is in flight, the creates that arrive wait for it, then go as one statement:
// one round trip and one commit for many, where the round trip and the commit cost a create more
// than its row does. At rest a create goes at once. Each user keeps its own outcome: a batch that a
// uniqueness violation refuses is written again one user at a time.
import type { Kysely } from 'kysely';
import { DuplicateKeyError } from '../db/constraints.js';
import type { DB } from '../db/tables.js';
import { insertUsers, type NewUser } from './users.repository.js';

/** Users one statement creates at most. */
const MAX_BATCH = 100;

interface Pending {
  readonly user: NewUser;
  readonly created: () => void;
  readonly failed: (error: unknown) => void;
}

interface Queue {
  pending: Pending[];
  writing: boolean;
}

/** The queues of each database view (an organization's share of the pool), by organization. */
const queues = new WeakMap<Kysely<DB>, Map<string, Queue>>();

/** Creates a user; resolves once it is committed with its count and its audit entry. */
export function createUserRow(db: Kysely<DB>, orgId: string, user: NewUser): Promise<void> {
  let byOrg = queues.get(db);
  if (!byOrg) {
    byOrg = new Map();
    queues.set(db, byOrg);
  }
  let queue = byOrg.get(orgId);
  if (!queue) {
    queue = { pending: [], writing: false };
    byOrg.set(orgId, queue);
  }
  const { pending } = queue;
  const written = new Promise<void>((created, failed) => pending.push({ user, created, failed }));
  if (!queue.writing) void drain(db, orgId, queue, byOrg);
  return written;
}

async function drain(db: Kysely<DB>, orgId: string, queue: Queue, byOrg: Map<string, Queue>) {
  queue.writing = true;
  try {
    while (queue.pending.length > 0) await write(db, orgId, queue.pending.splice(0, MAX_BATCH));
  } finally {
    queue.writing = false;
    byOrg.delete(orgId);
  }
}

async function write(db: Kysely<DB>, orgId: string, batch: readonly Pending[]): Promise<void> {
  try {
    await insertUsers(
      db,
      orgId,
      batch.map((p) => p.user),
    );
    for (const p of batch) p.created();
  } catch (error) {
    if (batch.length > 1 && error instanceof DuplicateKeyError) {
      for (const p of batch) await write(db, orgId, [p]);
    } else {
      for (const p of batch) p.failed(error);
    }
  }
}
