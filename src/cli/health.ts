// The command line's sync health: an organization's state, what it rests on, and its recent failed
// requests with what to do about them.

import { UsageError } from './admin-client.js';
import type { Command } from './command.js';
import { details, print, table } from './output.js';

interface Health {
  state: string;
  reasons: string[];
  lastRequestAt: string | null;
  lastSuccessAt: string | null;
  users: Record<string, number>;
  groups: number;
  tokens: Record<string, unknown>[];
  requests: {
    lastHour: Record<string, Record<string, number>>;
    lastDay: Record<string, Record<string, number>>;
  };
  recentFailures: Record<string, unknown>[];
}

/** One row per operation: its requests by outcome in the last hour and day. */
function requestRows(requests: Health['requests']) {
  const operations = [
    ...new Set([...Object.keys(requests.lastDay), ...Object.keys(requests.lastHour)]),
  ].sort();
  const text = (byOutcome: Record<string, number> | undefined) =>
    byOutcome
      ? Object.entries(byOutcome)
          .map(([outcome, n]) => `${outcome} ${n}`)
          .join(', ')
      : '-';
  return operations.map((operation) => ({
    operation,
    lastHour: text(requests.lastHour[operation]),
    lastDay: text(requests.lastDay[operation]),
  }));
}

function human(health: Health): string {
  const summary = details({
    state: health.state,
    why: health.reasons.join(' ') || '-',
    lastRequestAt: health.lastRequestAt,
    lastSuccessAt: health.lastSuccessAt,
    users: `${health.users.active} active, ${health.users.inactive} inactive, ${health.users.deprovisioned} deprovisioned`,
    groups: health.groups,
  });
  const failures = health.recentFailures.flatMap((f) => [
    `${f.at}  ${f.method} ${f.path}  ${f.status}${f.scimType ? ` ${f.scimType}` : ''}  request ${f.requestId}\n`,
    `  ${f.detail}\n`,
    ...(f.hint ? [`  hint: ${f.hint}\n`] : []),
  ]);
  return [
    summary,
    '\nTokens\n',
    table(health.tokens, ['id', 'name', 'prefix', 'lastUsedAt', 'lastSuccessAt', 'expiresAt', 'revokedAt']),
    '\nRequests\n',
    table(requestRows(health.requests), ['operation', 'lastHour', 'lastDay']),
    '\nRecent failed requests\n',
    failures.length ? failures.join('') : '(none)\n',
  ].join('');
}

export const HEALTH_COMMANDS: Record<string, Command> = {
  'org health': {
    usage: 'scimd org health ORG_ID [--failures N]',
    summary: "An organization's sync health: state, tokens, requests, and recent failed requests with hints",
    options: { failures: { type: 'string' } },
    positionals: ['ORG_ID'],
    async run({ positionals, values, api, io, json }) {
      const failures = values.failures;
      if (failures !== undefined && !/^\d+$/.test(String(failures)))
        throw new UsageError('--failures takes a whole number from 0 to 100');
      const query = failures === undefined ? '' : `?failures=${failures}`;
      const health = (await api.call(
        'GET',
        `/orgs/${encodeURIComponent(positionals[0]!)}/health${query}`,
      )) as Health;
      print(io, json, health, () => human(health));
    },
  },
};
