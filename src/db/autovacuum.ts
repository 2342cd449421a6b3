// Whether Postgres vacuums and analyzes scimd's tables by itself. Without it, the dead rows of
// updates and deletes pile up and the planner's statistics go stale: writes, pages and counts slow
// down as organizations grow, and nothing says why.
import { type Kysely, sql } from 'kysely';
import type { DB } from './tables.js';

export interface AutovacuumOff {
  /** The server's `autovacuum` setting is off. */
  readonly server: boolean;
  /** scimd's tables with `autovacuum_enabled` off, by name. */
  readonly tables: readonly string[];
}

export async function autovacuumOff(db: Kysely<DB>): Promise<AutovacuumOff> {
  const { rows } = await sql<{ server: boolean; tables: string[] }>`
    select current_setting('autovacuum') = 'off' as server,
      array(select c.relname::text from pg_class c
        where c.relnamespace = to_regnamespace(current_schema()) and c.relkind = 'r'
          and exists (select 1 from unnest(c.reloptions) o where o ~* '^autovacuum_enabled=(false|off|no|0)$')
        order by c.relname) as tables`.execute(db);
  const found = rows[0]!;
  return { server: found.server, tables: found.tables };
}

/** What to tell the operator, or undefined when autovacuum runs everywhere. */
export function autovacuumWarning(off: AutovacuumOff): string | undefined {
  const where = [
    ...(off.server ? ['the Postgres server (autovacuum = off)'] : []),
    ...(off.tables.length > 0 ? [`tables ${off.tables.join(', ')} (autovacuum_enabled = false)`] : []),
  ];
  if (where.length === 0) return undefined;
  return `autovacuum is off for ${where.join(' and ')}: dead rows and stale statistics slow writes and pages down as organizations grow; turn it on, or run VACUUM ANALYZE on a schedule`;
}
