// migrations/schema.sql is what the migrations build: rendered here as `npm run schema` renders it
// (scripts/schema-sql.ts), always from PGlite, also when the suite runs on Postgres.
import { readFileSync } from 'node:fs';
import { expect, inject, it } from 'vitest';
import { renderMigratedSchemaSql, SCHEMA_SQL_PATH } from '../../scripts/schema-sql.js';

it('migrations/schema.sql shows what the migrations build', async () => {
  // The run's migrated PGlite snapshot (test/global-setup.ts) when there is one; a fresh PGlite
  // database on Postgres runs. Either way the migrations are applied up to the latest.
  const snapshot = inject('pgliteSnapshot');
  const rendered = await renderMigratedSchemaSql(snapshot ? new Blob([readFileSync(snapshot)]) : undefined);
  const stored = readFileSync(SCHEMA_SQL_PATH, 'utf8');
  expect(
    stored,
    'migrations/schema.sql differs from what the migrations build: run `npm run schema` and commit it',
  ).toBe(rendered);
});
