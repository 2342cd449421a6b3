// The command line's roles and entitlements: the environment's catalogues put from a file, an
// organization's whole catalogue, its role mappings (shown, or put from a file), and a user's
// effective roles and entitlements.
import { readFile } from 'node:fs/promises';
import { UsageError } from './admin-client.js';
import type { Command } from './command.js';
import { details, print, table } from './output.js';

const org = (id: string) => `/orgs/${encodeURIComponent(id)}`;

/** A JSON file: `{"roles": [...]}` as the admin API takes it, or the bare array of entries. */
async function readJson(file: string, key?: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError(`${file} is not JSON`);
  }
  return key !== undefined && Array.isArray(value) ? { [key]: value } : value;
}

type Entry = Record<string, unknown>;

const catalogueTable = (entries: readonly Entry[], withPriority: boolean) =>
  table(entries, ['value', 'displayName', ...(withPriority ? ['priority'] : []), 'scope', 'description']);

function catalogueSet(kind: 'roles' | 'entitlements'): Command {
  return {
    usage: `scimd ${kind} set FILE.json`,
    summary: `Replace the environment's ${kind} (every organization's) from {"${kind}": [{value, displayName, description${kind === 'roles' ? ', priority' : ''}}]} or the bare array`,
    positionals: ['FILE'],
    async run({ positionals, api, io, json }) {
      const body = await readJson(positionals[0]!, kind);
      const result = (await api.call('PUT', `/${kind}`, body)) as Record<string, Entry[]>;
      print(io, json, result, () => catalogueTable(result[kind]!, kind === 'roles'));
    },
  };
}

interface Mappings {
  mappings: { group: { id?: string; displayName?: string }; role: string }[];
  defaultRole: string | null;
  mode: string;
}

function mappingsText(result: Mappings): string {
  const rows = result.mappings.map((m) => ({
    group: m.group.id ?? m.group.displayName,
    by: m.group.id === undefined ? 'displayName' : 'id',
    role: m.role,
  }));
  return `${details({ defaultRole: result.defaultRole, mode: result.mode })}\n${table(rows, ['group', 'by', 'role'])}`;
}

export const ROLE_COMMANDS: Record<string, Command> = {
  'roles set': catalogueSet('roles'),
  'entitlements set': catalogueSet('entitlements'),
  'org roles': {
    usage: 'scimd org roles ORG_ID',
    summary: "An organization's whole catalogue of roles and entitlements: the environment's and its own",
    positionals: ['ORG_ID'],
    async run({ positionals, api, io, json }) {
      const roles = (await api.call('GET', `${org(positionals[0]!)}/roles`)) as { roles: Entry[] };
      const entitlements = (await api.call('GET', `${org(positionals[0]!)}/entitlements`)) as {
        entitlements: Entry[];
      };
      print(io, json, { ...roles, ...entitlements }, () => {
        return `Roles\n${catalogueTable(roles.roles, true)}\nEntitlements\n${catalogueTable(entitlements.entitlements, false)}`;
      });
    },
  },
  'org role-mappings': {
    usage: 'scimd org role-mappings ORG_ID [FILE.json]',
    summary:
      'Show the role mappings, default role and mode; with FILE, replace them by {"mappings": [{"group": {"id"} or {"displayName"}, "role"}], "defaultRole", "mode"}',
    positionals: ['ORG_ID'],
    optionalPositionals: ['FILE'],
    async run({ positionals, api, io, json }) {
      const [id, file] = positionals as [string, string | undefined];
      const result = (
        file === undefined
          ? await api.call('GET', `${org(id)}/role-mappings`)
          : await api.call('PUT', `${org(id)}/role-mappings`, await readJson(file))
      ) as Mappings;
      print(io, json, result, () => mappingsText(result));
    },
  },
  'user roles': {
    usage: 'scimd user roles ORG_ID USER_ID',
    summary: "A user's effective roles and entitlements, each with what gives it (idp, group:<id>, default)",
    positionals: ['ORG_ID', 'USER_ID'],
    async run({ positionals, api, io, json }) {
      const [orgId, userId] = positionals as [string, string];
      const result = (await api.call('GET', `${org(orgId)}/users/${encodeURIComponent(userId)}/roles`)) as {
        roles: Entry[];
        entitlements: Entry[];
      };
      print(io, json, result, () => {
        const rows = [
          ...result.roles.map((r) => ({ kind: 'role', ...r })),
          ...result.entitlements.map((e) => ({ kind: 'entitlement', ...e })),
        ];
        return table(rows, ['kind', 'value', 'sources']);
      });
    },
  },
};
