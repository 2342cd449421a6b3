// What a command of the command line is: its usage, what it takes, and what it does.
import type { ParseArgsConfig } from 'node:util';
import type { Api } from './admin-client.js';
import type { Io } from './output.js';

export type Options = NonNullable<ParseArgsConfig['options']>;
export type Values = Record<string, string | boolean | undefined>;

export interface Command {
  readonly usage: string;
  readonly summary: string;
  readonly options?: Options;
  readonly positionals?: readonly string[];
  /** Positionals after those, each of which may be left out. */
  readonly optionalPositionals?: readonly string[];
  run(args: { values: Values; positionals: string[]; api: Api; io: Io; json: boolean }): Promise<void>;
}
