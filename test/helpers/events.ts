// What happened so far, in order, and a wait for what should happen next: a test waits on the event
// itself, never on a guessed duration or a polling loop.
export class Events<T> {
  readonly items: T[] = [];
  readonly #waiting = new Set<{ done: (items: readonly T[]) => boolean; resolve: () => void }>();

  push(item: T): void {
    this.items.push(item);
    for (const waiter of [...this.#waiting]) {
      if (!waiter.done(this.items)) continue;
      this.#waiting.delete(waiter);
      waiter.resolve();
    }
  }

  /** Resolves once `done` holds for what has happened (at once, if it already does). */
  until(done: (items: readonly T[]) => boolean): Promise<void> {
    if (done(this.items)) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.add({ done, resolve }));
  }

  /** Resolves once `count` have happened. */
  count(count: number): Promise<void> {
    return this.until((items) => items.length >= count);
  }
}
