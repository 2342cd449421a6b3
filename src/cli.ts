// The `scimd` command line. `serve` and `migrate` run locally; the admin commands (issue 6) are
// clients of the admin API.
import { parseArgs } from 'node:util';
import { readConfig } from './config.js';
import { type Database, openDatabase } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { main as serveMain } from './index.js';

const HELP = `Usage: scimd <command> [options]

Commands:
  serve      Start the SCIM server (same as npm start)
  migrate    Apply pending database migrations and exit

Options:
  --json     Print machine-readable JSON
  -h, --help Show help

Environment: PORT, HOST, DATABASE_URL (Postgres; otherwise embedded PGlite in DATA_DIR),
DATA_DIR (default ./data), PUBLIC_URL, SCIMD_ADMIN_TOKEN, LOG_LEVEL.
`;

export async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    process.stderr.write(`scimd: ${(error as Error).message}\n\n${HELP}`);
    return 2;
  }
  const [command] = parsed.positionals;
  if (parsed.values.help || !command) {
    process.stdout.write(HELP);
    return command || parsed.values.help ? 0 : 2;
  }
  switch (command) {
    case 'serve':
      await serveMain();
      return 0;
    case 'migrate':
      return migrate(parsed.values.json ?? false);
    default:
      process.stderr.write(`scimd: unknown command "${command}"\n\n${HELP}`);
      return 2;
  }
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
  });
}

async function migrate(json: boolean): Promise<number> {
  let database: Database | undefined;
  try {
    const config = readConfig();
    database = await openDatabase({ databaseUrl: config.databaseUrl, pgliteDir: config.dataDir });
    const applied = await migrateToLatest(database.db);
    if (json) process.stdout.write(`${JSON.stringify({ applied })}\n`);
    else
      process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
    return 0;
  } catch (error) {
    process.stderr.write(`scimd migrate: ${(error as Error).message}\n`);
    return 1;
  } finally {
    await database?.close();
  }
}
