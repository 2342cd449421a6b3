// Time in tests without sleeping: a clock the test moves by hand for the code that takes one, and for
// the code that stamps with the wall clock itself, a wait for the event that the clock has ticked on.

/**
 * The wall clock plus whatever the test moved it by: it reads the real time until a test moves it, so
 * times stamped elsewhere (a token's expiresAt, set by the admin API) stay comparable. `date` is the
 * time SCIM token checks use (createApp's `now`), `performance` what the token cache's lifetimes use.
 */
export class TestClock {
  #offset = 0;
  /** Never taken back: a cache must not see entries made ahead of time as younger than they are. */
  #performanceOffset = 0;

  readonly date = (): Date => new Date(Date.now() + this.#offset);

  readonly performance = { now: (): number => performance.now() + this.#performanceOffset };

  /** Moves the clock `ms` forward. */
  advance(ms: number): void {
    if (ms < 0) throw new Error('a test clock only moves forward');
    this.#offset += ms;
    this.#performanceOffset += ms;
  }

  /** Moves the clock forward to `instant` (it keeps running from there), or leaves it when later. */
  advanceTo(instant: Date | string | number): void {
    this.advance(Math.max(0, new Date(instant).getTime() - this.date().getTime()));
  }

  /** Back to the wall clock (after each test, so that no test sees another's time). */
  reset(): void {
    this.#offset = 0;
  }
}

/**
 * Resolves once the wall clock reads later than `instant`: for code that stamps rows with the wall
 * clock itself and takes no `now`, so that a stamp made after this differs from `instant`. It waits
 * for that event (a millisecond at most), not for a guessed duration.
 */
export async function wallClockPast(instant: Date | string | number): Promise<void> {
  const at = new Date(instant).getTime();
  while (Date.now() <= at) await new Promise((resolve) => setImmediate(resolve));
}
