// What the command line prints: tables and details for people, JSON for scripts.

/** Where a command writes, and the environment it reads: the process's own, or a test's. */
export interface Io {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly env: NodeJS.ProcessEnv;
  /** Ends a command that runs until interrupted (`changes --follow`). */
  readonly signal?: AbortSignal;
}

export const defaultIo: Io = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  env: process.env,
};

/** Columns of a table, left-aligned, for people. */
export function table(rows: readonly Record<string, unknown>[], columns: readonly string[]): string {
  if (rows.length === 0) return '(none)\n';
  const cell = (v: unknown) =>
    v === null || v === undefined ? '-' : Array.isArray(v) ? v.join(',') : String(v);
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (values: string[]) =>
    `${values
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd()}\n`;
  return line(columns.map((c) => c)) + rows.map((r) => line(columns.map((c) => cell(r[c])))).join('');
}

export function print(io: Io, json: boolean, value: unknown, human: () => string): void {
  io.out(json ? `${JSON.stringify(value, null, 2)}\n` : human());
}

export const ORG_COLUMNS = ['id', 'name', 'groupSync', 'deprovisioning', 'scimBaseUrl'];
export const TOKEN_COLUMNS = [
  'id',
  'name',
  'scopes',
  'prefix',
  'expiresAt',
  'revokedAt',
  'lastUsedAt',
  'replacedBy',
];

export function details(value: Record<string, unknown>): string {
  const width = Math.max(...Object.keys(value).map((k) => k.length));
  return Object.entries(value)
    .map(([k, v]) => `${k.padEnd(width)}  ${v === null ? '-' : Array.isArray(v) ? v.join(',') : String(v)}\n`)
    .join('');
}

/** A new token's secret, shown once. */
/** How scimd keeps a secret it shows once: a token's hash, or a webhook secret encrypted (it signs with it). */
type Kept = 'its hash' | 'it encrypted';

export const secretNotice = (
  token: { token: string },
  use = 'Give it to the IdP as the bearer token.',
  kept: Kept = 'its hash',
) => `\nSecret (shown only now; scimd keeps ${kept}):\n\n  ${token.token}\n\n${use}\n`;
