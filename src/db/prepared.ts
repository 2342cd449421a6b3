// Named prepared statements under Kysely. Every statement scimd sends has a fixed text (its values
// are parameters: statement.ts), and Postgres spends more time parsing and planning a SCIM lookup
// than running it; a named statement is parsed once per connection, and Postgres may keep its plan.
// Queries without parameters (migrations, BEGIN/COMMIT) keep pg's simple protocol, which allows
// several statements in one text. At most MAX_STATEMENTS distinct texts get names, so that texts
// without end (a migration's) cannot grow each connection's statements forever; past the cap a new
// text runs unnamed.
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';

const MAX_STATEMENTS = 500;

export function preparingPool(pool: pg.Pool): PostgresPool {
  const names = new Map<string, string>();
  const nameOf = (text: string): string | undefined => {
    let name = names.get(text);
    if (name === undefined && names.size < MAX_STATEMENTS) {
      name = `scimd_${names.size}`;
      names.set(text, name);
    }
    return name;
  };
  // One wrapper per pooled connection, so Kysely recognises a connection it has seen before.
  const wrapped = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  return {
    connect: async () => {
      const client = await pool.connect();
      let wrapper = wrapped.get(client);
      if (!wrapper) {
        wrapper = wrap(client, nameOf);
        wrapped.set(client, wrapper);
      }
      return wrapper;
    },
    end: () => pool.end(),
  };
}

function wrap(client: pg.PoolClient, nameOf: (text: string) => string | undefined): PostgresPoolClient {
  return {
    query: ((textOrCursor: unknown, parameters?: readonly unknown[]) => {
      if (typeof textOrCursor !== 'string') return client.query(textOrCursor as pg.Submittable);
      const values = parameters ? [...parameters] : [];
      const name = values.length > 0 ? nameOf(textOrCursor) : undefined;
      // pg's documented query config: a name makes it a prepared statement on this connection.
      return name ? client.query({ name, text: textOrCursor, values }) : client.query(textOrCursor, values);
    }) as unknown as PostgresPoolClient['query'],
    release: () => client.release(),
  };
}
