// Named prepared statements (src/db/prepared.ts), on Postgres and on PGlite: a query with parameters
// is prepared once per connection under its name, its results and errors come back as pg's would,
// and a query without parameters keeps the simple protocol.
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { createTestDatabase } from '../helpers/database.js';

let database: Database;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.close();
});

const PROBE = 'select $1::int + 1 as next, $2::text as label';

it('prepares a query with parameters once per connection, under its name', async () => {
  await database.db.connection().execute(async (db) => {
    for (const n of [1, 2, 3]) {
      const { rows } = await sql<{
        next: number;
        label: string;
      }>`select ${n}::int + 1 as next, ${`n${n}`}::text as label`.execute(db);
      expect(rows).toEqual([{ next: n + 1, label: `n${n}` }]);
    }
    const prepared = await sql<{ name: string; statement: string }>`
      select name, statement from pg_prepared_statements where statement = ${PROBE}`.execute(db);
    expect(prepared.rows).toHaveLength(1);
    expect(prepared.rows[0]!.name).toMatch(/^scimd_\d+$/);
  });
});

it('rejects with the database error, and the connection goes on serving', async () => {
  await database.db.connection().execute(async (db) => {
    const failing = sql`select 1 / ${0}::int as nothing`.execute(db);
    await expect(failing).rejects.toMatchObject({ code: '22012' });
    // The same statement again (now prepared) fails the same way; a different one works.
    await expect(sql`select 1 / ${0}::int as nothing`.execute(db)).rejects.toMatchObject({ code: '22012' });
    const { rows } = await sql<{ one: number }>`select ${1}::int as one`.execute(db);
    expect(rows).toEqual([{ one: 1 }]);
  });
});

it('sends a query without parameters unnamed, so one text may hold several statements', async () => {
  await database.db.connection().execute(async (db) => {
    await sql`select 1; select 2`.execute(db);
    const prepared = await sql<{ n: string }>`
      select count(*) as n from pg_prepared_statements where statement like ${'select 1; select 2%'}`.execute(
      db,
    );
    expect(Number(prepared.rows[0]!.n)).toBe(0);
  });
});
