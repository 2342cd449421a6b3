// Runs a snippet of ES module code in a separate node process that can import the TypeScript
// sources (through tsx), and returns what it printed: for behaviour that only a process shows, such
// as what happens at exit or with a second process on the same data.
import { type SpawnSyncReturns, spawnSync } from 'node:child_process';

export function runModule(code: string, env: NodeJS.ProcessEnv = process.env): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    env,
    encoding: 'utf8',
    timeout: 60_000,
  });
}
