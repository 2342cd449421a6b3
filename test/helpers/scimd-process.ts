// scimd as its own process, started the way an operator starts it (main() reading the environment),
// for what only a process shows: that it survives, how it starts and stops, what it logs, and two of
// them on one database.
import { type ChildProcess, spawn } from 'node:child_process';

export interface ScimdProcess {
  readonly origin: string;
  readonly child: ChildProcess;
  /** Everything it printed so far (JSON log lines and stderr). */
  output(): string;
  /** Whether it is still running. */
  alive(): boolean;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

const START = "const { main } = await import('./src/index.ts'); await main();";

/** Starts scimd with `env` (PORT 0 on 127.0.0.1 unless given); resolves once it serves. */
export function startScimd(env: Record<string, string>): Promise<ScimdProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', START], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      exitCode = code;
      resolve(code);
    }),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`scimd did not start within 60 s:\n${output}`));
    }, 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const serving = /"port":(\d+)[^\n]*"msg":"scimd is serving"/.exec(output);
      if (serving) {
        clearTimeout(timer);
        resolve({
          origin: `http://127.0.0.1:${serving[1]}`,
          child,
          output: () => output,
          alive: () => exitCode === undefined,
          stop: async () => {
            if (exitCode === undefined) child.kill('SIGTERM');
            return exited;
          },
        });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`scimd exited with ${code} before serving:\n${output}`));
    });
  });
}
