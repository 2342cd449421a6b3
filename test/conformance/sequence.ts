// An IdP's request sequence as one test: its steps run in order, each building on what the ones
// before it left, as the IdP's own run does. A failure names its step.
import { expect } from 'vitest';

interface Step {
  name: string;
  run: () => Promise<void>;
  assertions: number | undefined;
}

export function sequence() {
  const steps: Step[] = [];
  return {
    /** Adds a step; given `assertions`, the step must make exactly that many. */
    step(name: string, run: () => Promise<void>, assertions?: number): void {
      steps.push({ name, run, assertions });
    },
    /** Runs the steps in order: pass it to `it`. */
    async run(): Promise<void> {
      for (const { name, run, assertions } of steps) {
        const before = expect.getState().assertionCalls;
        try {
          await run();
        } catch (error) {
          if (error instanceof Error) error.message = `${name}: ${error.message}`;
          throw error;
        }
        const made = expect.getState().assertionCalls - before;
        if (assertions !== undefined && made !== assertions)
          throw new Error(`${name}: made ${made} assertions, expected ${assertions}`);
      }
    },
  };
}
