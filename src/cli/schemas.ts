// The command line's custom schemas: an organization's own extensions, put from a JSON file, listed,
// shown and deleted.
import { readFile } from 'node:fs/promises';
import { UsageError } from './admin-client.js';
import type { Command } from './command.js';
import { details, print, table } from './output.js';

const path = (org: string, urn?: string) =>
  `/orgs/${encodeURIComponent(org)}/schemas${urn === undefined ? '' : `/${encodeURIComponent(urn)}`}`;

async function readSchema(file: string): Promise<{ id?: unknown }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text) as { id?: unknown };
  } catch {
    throw new UsageError(`${file} is not JSON: give an RFC 7643 Schema resource`);
  }
}

const summaryOf = (schema: Record<string, unknown>) => ({
  id: schema.id,
  resourceType: schema.resourceType,
  attributes: (schema.attributes as { name: string }[]).map((a) => a.name).join(','),
  updatedAt: schema.updatedAt,
});

export const SCHEMA_COMMANDS: Record<string, Command> = {
  'schema put': {
    usage: 'scimd schema put ORG_ID FILE.json',
    summary:
      "Add or replace one of an organization's own schemas from an RFC 7643 Schema resource (its id is the URN)",
    positionals: ['ORG_ID', 'FILE'],
    async run({ positionals, api, io, json }) {
      const [org, file] = positionals as [string, string];
      const schema = await readSchema(file);
      if (typeof schema.id !== 'string') throw new UsageError(`${file} has no "id": the schema's URN`);
      const put = (await api.call('PUT', path(org, schema.id), schema)) as Record<string, unknown>;
      print(io, json, put, () => details(summaryOf(put)));
    },
  },
  'schema list': {
    usage: 'scimd schema list ORG_ID',
    summary: "List an organization's own schemas",
    positionals: ['ORG_ID'],
    async run({ positionals, api, io, json }) {
      const result = (await api.call('GET', path(positionals[0]!))) as { schemas: Record<string, unknown>[] };
      print(io, json, result, () =>
        table(result.schemas.map(summaryOf), ['id', 'resourceType', 'attributes', 'updatedAt']),
      );
    },
  },
  'schema show': {
    usage: 'scimd schema show ORG_ID URN',
    summary: 'Show one schema with every characteristic of its attributes (as JSON)',
    positionals: ['ORG_ID', 'URN'],
    async run({ positionals, api, io }) {
      const schema = await api.call('GET', path(positionals[0]!, positionals[1]!));
      io.out(`${JSON.stringify(schema, null, 2)}\n`);
    },
  },
  'schema delete': {
    usage: 'scimd schema delete ORG_ID URN',
    summary: 'Remove a schema: resources keep its values, unseen, until it is put again',
    positionals: ['ORG_ID', 'URN'],
    async run({ positionals, api, io, json }) {
      await api.call('DELETE', path(positionals[0]!, positionals[1]!));
      print(io, json, { deleted: positionals[1] }, () => `deleted ${positionals[1]}\n`);
    },
  },
};
