// The `scimd` command line. `serve` and `migrate` run locally; every other command is a client of the
// admin API at SCIMD_URL, authenticated with SCIMD_ADMIN_TOKEN or the admin-token file. Tables for
// people, `--json` for scripts; exit 0 on success, 1 when the server refuses or fails, 2 on usage
// errors, 3 when the server cannot be reached.
import { parseArgs } from 'node:util';
import { ApiError, adminClient, UnreachableError, UsageError } from './cli/admin-client.js';
import type { Command, Options, Values } from './cli/command.js';
import { FEED_COMMANDS } from './cli/feed.js';
import { HEALTH_COMMANDS } from './cli/health.js';
import {
  defaultIo,
  details,
  type Io,
  ORG_COLUMNS,
  print,
  secretNotice,
  TOKEN_COLUMNS,
  table,
} from './cli/output.js';
import { ROLE_COMMANDS } from './cli/roles.js';
import { SCHEMA_COMMANDS } from './cli/schemas.js';
import { SETUP_LINK_COMMANDS } from './cli/setup-links.js';
import { WEBHOOK_COMMANDS } from './cli/webhooks.js';
import { databaseOptions, readConfig } from './config.js';
import { type Database, openDatabase } from './db/database.js';
import { main as serveMain } from './index.js';
import { packageVersion } from './version.js';

function booleanOption(name: string, value: string | boolean | undefined): boolean | undefined {
  if (value === undefined || typeof value === 'boolean') return value;
  if (value === 'true' || value === 'on') return true;
  if (value === 'false' || value === 'off') return false;
  throw new UsageError(`--${name} takes true or false`);
}

function orgBody(values: Values) {
  const groupSync = booleanOption('group-sync', values['group-sync']);
  return {
    ...(values.name !== undefined ? { name: values.name } : {}),
    ...(groupSync !== undefined ? { groupSync } : {}),
    ...(values.deprovisioning !== undefined ? { deprovisioning: values.deprovisioning } : {}),
  };
}

const orgOptions: Options = {
  name: { type: 'string' },
  'group-sync': { type: 'string' },
  deprovisioning: { type: 'string' },
};

const COMMANDS: Record<string, Command> = {
  serve: {
    usage: 'scimd serve',
    summary: 'Start the SCIM server (same as npm start; configured by the environment)',
    async run() {
      await serveMain();
    },
  },
  migrate: {
    usage: 'scimd migrate',
    summary: 'Apply pending database migrations and exit',
    async run({ io, json }) {
      let database: Database | undefined;
      try {
        const config = readConfig(io.env);
        database = await openDatabase(databaseOptions(config));
        const applied = await database.migrate();
        print(io, json, { applied }, () =>
          applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n',
        );
      } catch (error) {
        throw new ApiError(1, (error as Error).message);
      } finally {
        await database?.close();
      }
    },
  },
  'org create': {
    usage:
      'scimd org create --name NAME [--group-sync true|false] [--deprovisioning deactivate|anonymize|delete]',
    summary: 'Create an organization; prints its id and SCIM base URL',
    options: orgOptions,
    async run({ values, api, io, json }) {
      if (!values.name) throw new UsageError('--name is required');
      const org = (await api.call('POST', '/orgs', orgBody(values))) as Record<string, unknown>;
      print(io, json, org, () => details(org));
    },
  },
  'org list': {
    usage: 'scimd org list',
    summary: 'List organizations',
    async run({ api, io, json }) {
      const { orgs } = (await api.call('GET', '/orgs')) as { orgs: Record<string, unknown>[] };
      print(io, json, { orgs }, () => table(orgs, ORG_COLUMNS));
    },
  },
  'org show': {
    usage: 'scimd org show ORG_ID',
    summary: 'Show one organization',
    positionals: ['ORG_ID'],
    async run({ positionals, api, io, json }) {
      const org = (await api.call('GET', `/orgs/${encodeURIComponent(positionals[0]!)}`)) as Record<
        string,
        unknown
      >;
      print(io, json, org, () => details(org));
    },
  },
  'org update': {
    usage: 'scimd org update ORG_ID [--name NAME] [--group-sync true|false] [--deprovisioning MODE]',
    summary: 'Change the name, group synchronization or deprovisioning mode',
    options: orgOptions,
    positionals: ['ORG_ID'],
    async run({ values, positionals, api, io, json }) {
      const body = orgBody(values);
      if (Object.keys(body).length === 0)
        throw new UsageError('Give --name, --group-sync or --deprovisioning');
      const org = (await api.call('PATCH', `/orgs/${encodeURIComponent(positionals[0]!)}`, body)) as Record<
        string,
        unknown
      >;
      print(io, json, org, () => details(org));
    },
  },
  'org delete': {
    usage: 'scimd org delete ORG_ID --yes',
    summary: 'Delete an organization with all its users, groups, tokens and audit log',
    options: { yes: { type: 'boolean' } },
    positionals: ['ORG_ID'],
    async run({ values, positionals, api, io, json }) {
      if (!values.yes)
        throw new UsageError('This deletes the organization and all its data; add --yes to confirm');
      await api.call('DELETE', `/orgs/${encodeURIComponent(positionals[0]!)}`);
      print(io, json, { deleted: positionals[0] }, () => `deleted ${positionals[0]}\n`);
    },
  },
  'token create': {
    usage: 'scimd token create ORG_ID [--name NAME] [--scopes users,groups] [--expires-at ISO-8601]',
    summary: 'Issue a SCIM token; its secret is shown once',
    options: { name: { type: 'string' }, scopes: { type: 'string' }, 'expires-at': { type: 'string' } },
    positionals: ['ORG_ID'],
    async run({ values, positionals, api, io, json }) {
      const body = {
        ...(values.name !== undefined ? { name: values.name } : {}),
        ...(typeof values.scopes === 'string'
          ? { scopes: values.scopes.split(',').map((s) => s.trim()) }
          : {}),
        ...(values['expires-at'] !== undefined ? { expiresAt: values['expires-at'] } : {}),
      };
      const token = (await api.call('POST', `/orgs/${encodeURIComponent(positionals[0]!)}/tokens`, body)) as {
        token: string;
      } & Record<string, unknown>;
      print(io, json, token, () => {
        const { token: _secret, ...shown } = token;
        return details(shown) + secretNotice(token);
      });
    },
  },
  'token list': {
    usage: 'scimd token list ORG_ID',
    summary: "List an organization's tokens (never their secrets)",
    positionals: ['ORG_ID'],
    async run({ positionals, api, io, json }) {
      const { tokens } = (await api.call('GET', `/orgs/${encodeURIComponent(positionals[0]!)}/tokens`)) as {
        tokens: Record<string, unknown>[];
      };
      print(io, json, { tokens }, () => table(tokens, TOKEN_COLUMNS));
    },
  },
  'token rotate': {
    usage: 'scimd token rotate ORG_ID TOKEN_ID [--overlap SECONDS]',
    summary: 'Issue the replacement of a token; the old one works until revoked, or for --overlap seconds',
    options: { overlap: { type: 'string' } },
    positionals: ['ORG_ID', 'TOKEN_ID'],
    async run({ values, positionals, api, io, json }) {
      let body = {};
      if (values.overlap !== undefined) {
        const seconds = Number(values.overlap);
        if (!Number.isInteger(seconds) || seconds < 0)
          throw new UsageError('--overlap takes a number of seconds');
        body = { overlapSeconds: seconds };
      }
      const [org, id] = positionals.map(encodeURIComponent);
      const token = (await api.call('POST', `/orgs/${org}/tokens/${id}/rotate`, body)) as {
        token: string;
      } & Record<string, unknown>;
      print(io, json, token, () => {
        const { token: _secret, ...shown } = token;
        return (
          details(shown) +
          secretNotice(token) +
          `Then, once the IdP has synchronized with it: scimd token revoke ${positionals[0]} ${positionals[1]}\n`
        );
      });
    },
  },
  'token revoke': {
    usage: 'scimd token revoke ORG_ID TOKEN_ID [--force]',
    summary: 'Revoke a token (refused while its replacement has not yet succeeded, unless --force)',
    options: { force: { type: 'boolean' } },
    positionals: ['ORG_ID', 'TOKEN_ID'],
    async run({ values, positionals, api, io, json }) {
      const [org, id] = positionals.map(encodeURIComponent);
      const token = (await api.call('POST', `/orgs/${org}/tokens/${id}/revoke`, {
        ...(values.force ? { force: true } : {}),
      })) as Record<string, unknown>;
      print(io, json, token, () => details(token));
    },
  },
  events: {
    usage: 'scimd events ORG_ID [--limit N] [--cursor C] [--resource-id ID] [--since ISO] [--until ISO]',
    summary: "Read an organization's audit log, newest first",
    options: {
      limit: { type: 'string' },
      cursor: { type: 'string' },
      'resource-id': { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
    },
    positionals: ['ORG_ID'],
    async run({ values, positionals, api, io, json }) {
      const query = new URLSearchParams();
      for (const [flag, param] of [
        ['limit', 'limit'],
        ['cursor', 'cursor'],
        ['resource-id', 'resourceId'],
        ['since', 'since'],
        ['until', 'until'],
      ] as const) {
        const value = values[flag];
        if (typeof value === 'string') query.set(param, value);
      }
      const path = `/orgs/${encodeURIComponent(positionals[0]!)}/events${query.size ? `?${query}` : ''}`;
      const result = (await api.call('GET', path)) as {
        events: Record<string, unknown>[];
        nextCursor: string | null;
      };
      print(io, json, result, () => {
        const rows = table(result.events, ['at', 'actor', 'action', 'resourceType', 'resourceId', 'status']);
        return (
          rows +
          (result.nextCursor ? `\nmore: scimd events ${positionals[0]} --cursor ${result.nextCursor}\n` : '')
        );
      });
    },
  },
  ...HEALTH_COMMANDS,
  ...SETUP_LINK_COMMANDS,
  ...SCHEMA_COMMANDS,
  ...ROLE_COMMANDS,
  ...FEED_COMMANDS,
  ...WEBHOOK_COMMANDS,
};

function overview(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((k) => k.length));
  return `Usage: scimd <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`)
  .join('\n')}

Every command takes --json (machine-readable output) and --help; scimd --version prints the version.
Server: PORT, HOST, DATABASE_URL (Postgres; otherwise embedded PGlite in DATA_DIR), DATA_DIR (./data),
PUBLIC_URL, SCIMD_ADMIN_TOKEN, LOG_LEVEL.
Client: SCIMD_URL (default http://localhost:8080), SCIMD_ADMIN_TOKEN or $DATA_DIR/admin-token;
\`scimd changes\` also takes a read-only key in SCIMD_API_KEY.
`;
}

function commandHelp(command: Command): string {
  return `${command.summary}.\n\nUsage: ${command.usage} [--json]\n`;
}

export async function main(argv: string[], io: Io = defaultIo): Promise<number> {
  const words: string[] = [];
  for (const arg of argv) {
    if (arg.startsWith('-')) break;
    words.push(arg);
  }
  if (argv[0] === '--version' || argv[0] === '-v' || argv[0] === 'version') {
    io.out(`${packageVersion()}\n`);
    return 0;
  }
  const name = [words.slice(0, 2).join(' '), words[0] ?? ''].find((n) => n && COMMANDS[n]);
  const wantsHelp = argv.includes('--help') || argv.includes('-h');
  if (!name) {
    if (words.length === 0) {
      io[wantsHelp ? 'out' : 'err'](overview());
      return wantsHelp ? 0 : 2;
    }
    io.err(`scimd: unknown command "${words.join(' ')}"\n\n${overview()}`);
    return 2;
  }
  const command = COMMANDS[name]!;
  if (wantsHelp) {
    io.out(commandHelp(command));
    return 0;
  }
  const rest = argv.slice(name.split(' ').length);
  try {
    const parsed = parseArgs({
      args: rest,
      allowPositionals: true,
      strict: true,
      options: { ...command.options, json: { type: 'boolean' } },
    });
    const expected = command.positionals ?? [];
    const optional = command.optionalPositionals ?? [];
    const given = parsed.positionals.length;
    if (given < expected.length || given > expected.length + optional.length) {
      const named = [...expected, ...optional.map((p) => `[${p}]`)];
      throw new UsageError(`expected ${named.length ? named.join(' ') : 'no arguments'}`);
    }
    await command.run({
      values: parsed.values as Values,
      positionals: parsed.positionals,
      api: adminClient(io.env),
      io,
      json: parsed.values.json === true,
    });
    return 0;
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`scimd ${name}: ${(error as Error).message}\n\nUsage: ${command.usage} [--json]\n`);
      return 2;
    }
    if (error instanceof UnreachableError) {
      io.err(`scimd ${name}: ${error.message}\n`);
      return 3;
    }
    if (error instanceof ApiError) {
      io.err(`scimd ${name}: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}
