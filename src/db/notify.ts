// Postgres NOTIFY, for announcing a change to other scimd processes (they LISTEN: database.ts).
import { type Kysely, sql } from 'kysely';
import { param, statement } from './statement.js';
import type { DB } from './tables.js';

const notify = statement((db) =>
  db.selectNoFrom(sql`pg_notify(${param('channel')}, ${param('payload')})`.as('sent')),
);

/** Sends `payload` on a Postgres channel when the transaction of `db` commits (at once outside one). */
export async function notifyChannel(db: Kysely<DB>, channel: string, payload: string): Promise<void> {
  await notify.run(db, { channel, payload });
}
