// Rows that many connections would write at once (an organization's counts, a group's member-change
// time) are spread over shards: a statement writes the shard of its connection, so concurrent
// statements on other connections never wait on its row lock.
import { sql } from 'kysely';

const SHARDS = 16;

/** The shard of the connection running the statement. */
export const connectionShard = () => sql<number>`pg_backend_pid() % ${sql.lit(SHARDS)}`;
