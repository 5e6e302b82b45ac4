/**
 * A subscriber's pending updates, as the AsyncIterator graphql-js reads a subscription's events from.
 *
 * Bounded by construction: an update for a key (a project, a template) that is still waiting replaces the
 * waiting one, merged with it, so a subscriber that reads slowly holds at most one update per thing it watches,
 * and the newest one. `return()` (the client completed, or the socket closed) ends it at once, even while a
 * `next()` is pending, and runs `onEnd` once.
 */
export class UpdateQueue<T> implements AsyncIterableIterator<T> {
  private readonly waiting = new Map<string, T>();
  private reader: ((result: IteratorResult<T>) => void) | null = null;
  private ended = false;
  /** End once the waiting updates are read (the last update of a template that was deleted). */
  private endWhenDrained = false;

  constructor(private readonly merge: (older: T, newer: T) => T, private readonly onEnd: () => void) {}

  get done(): boolean {
    return this.ended;
  }

  push(key: string, update: T, last = false): void {
    if (this.ended) return;
    if (last) this.endWhenDrained = true;
    if (this.reader) {
      const read = this.reader;
      this.reader = null;
      read({ value: update, done: false });
      if (this.endWhenDrained && this.waiting.size === 0) this.end();
      return;
    }
    const older = this.waiting.get(key);
    // Deleted first, so that the merged update takes the place of the newest.
    this.waiting.delete(key);
    this.waiting.set(key, older === undefined ? update : this.merge(older, update));
  }

  next(): Promise<IteratorResult<T>> {
    const first = this.waiting.entries().next();
    if (!first.done) {
      const [key, value] = first.value;
      this.waiting.delete(key);
      if (this.endWhenDrained && this.waiting.size === 0) this.end();
      return Promise.resolve({ value, done: false });
    }
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.reader = resolve;
    });
  }

  return(): Promise<IteratorResult<T>> {
    this.waiting.clear();
    this.end();
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(err: unknown): Promise<IteratorResult<T>> {
    this.return();
    return Promise.reject(err);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    const read = this.reader;
    this.reader = null;
    read?.({ value: undefined, done: true });
    this.onEnd();
  }
}
