import { LRUCache } from 'lru-cache';
import { ServiceUnavailableError, TooManyRequestsError, withoutStack } from '../errors/errors';
import type { Config } from '../config';
import type { AppMiddleware } from './state';

/**
 * Admission control (docs/faults.md, "Overload"): the work that costs runs within a concurrency limit per cost
 * class, so that under overload each interface gets its share of the cores and a cheap REST read is not stuck
 * behind dashboard queries (nor they behind a flood of reads). A class's requests beyond its limit wait in its
 * queue:
 *
 * - in arrival order, so that the oldest are the first to run out of time; with `lifoAfterMs` set, newest first
 *   once the oldest has waited that long (adaptive LIFO: off by default, as on this service's mix it refused
 *   more, docs/faults.md);
 * - at most `maxWaitMs`: then 503 + Retry-After, never a wait nobody is served by (refusing at once those that
 *   would wait longer was tried: clients that retry at once then spend the cores on refusals, docs/faults.md);
 * - at most `queue` of them: a request that finds the queue full is refused at once (no wait);
 * - with `perCaller` set (GraphQL), a share per caller: at most `perCaller.concurrency` of one caller's requests run
 *   at once and `perCaller.queue` wait, one more is refused at once with 429, and so is one that, behind the caller's
 *   own, would wait past `maxWaitMs` at the pace its turns have lasted; a turn that frees goes to the waiter
 *   whose caller has the fewest running (a fair queue). So a caller who floods has few requests waiting, and another
 *   caller's request takes the next turn that frees: it waits behind the running ones only, never behind the flood.
 *
 * Memory stays bounded by the limits (GraphQL's partly built answers, which the former "turns" bounded alone).
 */

export type CostClass = 'graphql' | 'graphql-write' | 'rest-read' | 'rest-write' | 'delivery';
export const COST_CLASSES: readonly CostClass[] = ['graphql', 'graphql-write', 'rest-read', 'rest-write', 'delivery'];

export interface ClassLimits {
  concurrency: number;
  queue: number;
  maxWaitMs: number;
  lifoAfterMs: number;
  /** One caller's share of the class: requests running at once, and waiting (docs/faults.md, "Overload"). */
  perCaller?: { concurrency: number; queue: number };
}

type RefusalReason = 'queue-full' | 'waited' | 'caller-share';

export interface AdmissionObserver {
  waited(cls: CostClass, ms: number): void;
  refused(cls: CostClass, reason: RefusalReason): void;
  queueLength(cls: CostClass, n: number): void;
}

interface Waiter {
  since: number;
  caller: string | null;
  admit(): void;
  timer: NodeJS.Timeout;
}

/** Requests of one caller in a class: running, and waiting. */
interface CallerCount { running: number; waiting: number }

class ClassQueue {
  running = 0;
  readonly waiting: Waiter[] = [];
  private readonly callers = new Map<string, CallerCount>();
  /** How long each caller's turns have lasted, a moving average in ms (kept while it is idle, for the next burst). */
  private readonly pace = new LRUCache<string, number>({ max: 10_000 });

  constructor(readonly cls: CostClass, readonly limits: ClassLimits, private readonly observer?: AdmissionObserver) {}

  private countOf(caller: string | null): CallerCount | null {
    if (caller === null || !this.limits.perCaller) return null;
    let count = this.callers.get(caller);
    if (!count) this.callers.set(caller, count = { running: 0, waiting: 0 });
    return count;
  }

  /** Forgets a caller with nothing running or waiting: the map holds the callers of the moment only. */
  private tidy(caller: string | null, count: CallerCount | null): void {
    if (caller !== null && count && count.running === 0 && count.waiting === 0) this.callers.delete(caller);
  }

  /** Whether a caller may take one more turn (within its share). */
  private mayRun(count: CallerCount | null): boolean {
    return count === null || count.running < this.limits.perCaller!.concurrency;
  }

  /**
   * Resolves with the release of a turn; rejects with 503 when the request will not be served, with 429 when its
   * caller already has its share running and waiting. A turn is free for the caller at once when the class has one and
   * the caller is under its share: every waiter that could run has already been admitted (next()).
   */
  enter(caller: string | null = null): Promise<() => void> {
    const { limits, observer, cls } = this;
    const count = this.countOf(caller);
    if (this.running < limits.concurrency && this.mayRun(count) && (count !== null || this.waiting.length === 0)) {
      this.running++;
      if (count) count.running++;
      observer?.waited(cls, 0);
      return Promise.resolve(this.releaser(caller, count));
    }
    if (count && count.waiting >= limits.perCaller!.queue) {
      this.tidy(caller, count);
      observer?.refused(cls, 'caller-share');
      return Promise.reject(withoutStack(() => new TooManyRequestsError(
        `Too many ${cls} requests of this caller at once: at most ${limits.perCaller!.concurrency} run and ${limits.perCaller!.queue} wait; retry when one has answered`, 1)));
    }
    // Behind its own requests, at the pace its turns have lasted, it would wait past the bound: refused now, not then.
    const turnMs = caller !== null && count ? this.pace.get(caller) ?? 0 : 0;
    if (count && ((count.waiting + 1) * turnMs) / limits.perCaller!.concurrency > limits.maxWaitMs) {
      this.tidy(caller, count);
      observer?.refused(cls, 'caller-share');
      return Promise.reject(withoutStack(() => new TooManyRequestsError(
        `Too many ${cls} requests of this caller at once: its operations take about ${Math.round(turnMs)} ms each, one more would wait past ${limits.maxWaitMs} ms; retry when one has answered`,
        Math.max(1, Math.ceil(turnMs / 1000)))));
    }
    if (this.waiting.length >= limits.queue) {
      this.tidy(caller, count);
      observer?.refused(cls, 'queue-full');
      return Promise.reject(new ServiceUnavailableError(`The service is overloaded: too many ${cls} requests are waiting`, { retryAfterSeconds: 1 }));
    }
    return new Promise((resolve, reject) => {
      if (count) count.waiting++;
      const waiter: Waiter = {
        since: Date.now(),
        caller,
        admit: () => {
          clearTimeout(waiter.timer);
          observer?.waited(cls, Date.now() - waiter.since);
          resolve(this.releaser(caller, count));
        },
        timer: setTimeout(() => {
          const i = this.waiting.indexOf(waiter);
          if (i >= 0) this.waiting.splice(i, 1);
          if (count) count.waiting--;
          this.tidy(caller, count);
          observer?.queueLength(cls, this.waiting.length);
          observer?.refused(cls, 'waited');
          reject(new ServiceUnavailableError(`The service is overloaded: a ${cls} request waited ${limits.maxWaitMs} ms for its turn`, { retryAfterSeconds: 1 }));
        }, limits.maxWaitMs),
      };
      this.waiting.push(waiter);
      observer?.queueLength(cls, this.waiting.length);
    });
  }

  private releaser(caller: string | null, count: CallerCount | null): () => void {
    let released = false;
    const since = Date.now();
    return () => {
      if (released) return;
      released = true;
      this.running--;
      if (count && caller !== null) {
        count.running--;
        const ms = Date.now() - since;
        const known = this.pace.get(caller);
        this.pace.set(caller, known === undefined ? ms : 0.7 * known + 0.3 * ms);
      }
      this.tidy(caller, count);
      this.next();
    };
  }

  /** Gives the free turns to the waiters, in order, skipping those whose caller has its share running. */
  private next(): void {
    while (this.running < this.limits.concurrency && this.waiting.length > 0) {
      // A standing queue, when adaptive LIFO is on: newest first (the oldest age out at maxWaitMs).
      const standing = this.limits.lifoAfterMs > 0 && Date.now() - this.waiting[0].since > this.limits.lifoAfterMs;
      const i = this.runnable(standing);
      if (i < 0) return;
      const [waiter] = this.waiting.splice(i, 1);
      const count = waiter.caller === null ? null : this.callers.get(waiter.caller) ?? null;
      if (count) {
        count.waiting--;
        count.running++;
      }
      this.running++;
      this.observer?.queueLength(this.cls, this.waiting.length);
      waiter.admit();
    }
  }

  /**
   * The waiter to admit: among those whose caller is under its share, the one whose caller has the fewest requests
   * running (a fair queue: a caller with many in flight yields to one with none), the oldest of them (the newest,
   * `newestFirst`); -1 when none may run.
   */
  private runnable(newestFirst: boolean): number {
    const n = this.waiting.length;
    let best = -1;
    let fewest = Infinity;
    for (let k = 0; k < n; k++) {
      const i = newestFirst ? n - 1 - k : k;
      const caller = this.waiting[i].caller;
      const count = caller === null ? null : this.callers.get(caller) ?? null;
      if (!this.mayRun(count)) continue;
      const running = count?.running ?? 0;
      if (running < fewest) {
        best = i;
        fewest = running;
        if (running === 0) break;
      }
    }
    return best;
  }

  /** Share of its capacity in use: 0 idle, 1 its queue full. */
  load(): number {
    return (this.running + this.waiting.length) / (this.limits.concurrency + this.limits.queue);
  }
}

export class Admission {
  private readonly classes: Map<CostClass, ClassQueue>;

  constructor(limits: Record<CostClass, ClassLimits>, observer?: AdmissionObserver) {
    this.classes = new Map(COST_CLASSES.map((cls) => [cls, new ClassQueue(cls, limits[cls], observer)]));
  }

  /** Waits for a turn of `cls` (within `caller`'s share, where the class has shares); the function given back ends it (once). */
  enter(cls: CostClass, caller: string | null = null): Promise<() => void> {
    return this.classes.get(cls)!.enter(caller);
  }

  /** Runs `work` in a turn of `cls`. */
  async run<T>(cls: CostClass, work: () => Promise<T>): Promise<T> {
    const release = await this.enter(cls);
    try {
      return await work();
    } finally {
      release();
    }
  }

  /** Per class, the share of its capacity in use; `load` the highest: what /loadz tells a balancer. */
  loads(): { load: number; classes: Record<CostClass, { running: number; waiting: number; load: number }> } {
    const classes = Object.fromEntries([...this.classes].map(([cls, q]) => [cls, { running: q.running, waiting: q.waiting.length, load: q.load() }])) as Record<CostClass, { running: number; waiting: number; load: number }>;
    return { load: Math.max(...Object.values(classes).map((c) => c.load)), classes };
  }
}

/**
 * The limits of each class from the configuration: GraphQL queries (the costliest: a dashboard is tens of
 * milliseconds of CPU and megabytes of answer) as many as processors, REST reads three times, writes eight times
 * (each mostly waits on the database: REST's, and GraphQL's mutations, in a class of their own with the same turns),
 * subscription deliveries one batch at a time, never refused (a batch waits for its turn; its updates are not
 * dropped). GraphQL's classes are shared per caller. docs/faults.md gives the measurements behind them.
 */
export function admissionLimits(config: Pick<Config, 'graphql' | 'admission'>): Record<CostClass, ClassLimits> {
  const { admission, graphql } = config;
  const rest = { queue: admission.queueLength, maxWaitMs: admission.maxWaitMs, lifoAfterMs: admission.lifoAfterMs };
  return {
    graphql: {
      concurrency: graphql.maxConcurrentOperations, queue: admission.queueLength, maxWaitMs: graphql.queueTimeoutMs, lifoAfterMs: admission.lifoAfterMs,
      perCaller: { concurrency: graphql.maxConcurrentOperationsPerCaller, queue: graphql.queueLengthPerCaller },
    },
    'graphql-write': {
      concurrency: admission.restWrites, queue: admission.queueLength, maxWaitMs: graphql.queueTimeoutMs, lifoAfterMs: admission.lifoAfterMs,
      perCaller: { concurrency: Math.max(1, Math.floor(admission.restWrites / 2)), queue: graphql.queueLengthPerCaller },
    },
    'rest-read': { concurrency: admission.restReads, ...rest },
    'rest-write': { concurrency: admission.restWrites, ...rest },
    delivery: { concurrency: 1, queue: 1_000_000, maxWaitMs: 2 ** 31 - 1, lifoAfterMs: 0 },
  };
}

/**
 * The layers below in a turn of `cls` (within the share of the caller `callerOf` names, where the class has shares).
 * A request whose client went away while it waited is not run: it would spend the turn others wait for and, for a
 * write, change data the client will believe unchanged and send again.
 */
export function admitted(
  admission: Admission,
  cls: CostClass | ((ctx: Parameters<AppMiddleware>[0]) => CostClass),
  callerOf?: (ctx: Parameters<AppMiddleware>[0]) => Promise<string | null>,
): AppMiddleware {
  return async (ctx, next) => {
    const release = await admission.enter(typeof cls === 'function' ? cls(ctx) : cls, callerOf ? await callerOf(ctx) : null);
    if (ctx.req?.socket?.destroyed) {
      release();
      return;
    }
    try {
      await next();
    } finally {
      release();
    }
  };
}
