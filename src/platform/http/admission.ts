import { ServiceUnavailableError } from '../errors/errors';
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
 * - at most `queue` of them: a request that finds the queue full is refused at once (no wait).
 *
 * Memory stays bounded by the limits (GraphQL's partly built answers, which the former "turns" bounded alone).
 */

export type CostClass = 'graphql' | 'rest-read' | 'rest-write' | 'delivery';
export const COST_CLASSES: readonly CostClass[] = ['graphql', 'rest-read', 'rest-write', 'delivery'];

export interface ClassLimits {
  concurrency: number;
  queue: number;
  maxWaitMs: number;
  lifoAfterMs: number;
}

export type RefusalReason = 'queue-full' | 'waited';

export interface AdmissionObserver {
  waited(cls: CostClass, ms: number): void;
  refused(cls: CostClass, reason: RefusalReason): void;
  queueLength(cls: CostClass, n: number): void;
}

interface Waiter {
  since: number;
  admit(): void;
  timer: NodeJS.Timeout;
}

class ClassQueue {
  running = 0;
  readonly waiting: Waiter[] = [];

  constructor(readonly cls: CostClass, readonly limits: ClassLimits, private readonly observer?: AdmissionObserver) {}

  /** Resolves with the release of a turn; rejects with 503 when the request will not be served. */
  enter(): Promise<() => void> {
    const { limits, observer, cls } = this;
    if (this.running < limits.concurrency && this.waiting.length === 0) {
      this.running++;
      observer?.waited(cls, 0);
      return Promise.resolve(this.releaser());
    }
    if (this.waiting.length >= limits.queue) {
      observer?.refused(cls, 'queue-full');
      return Promise.reject(new ServiceUnavailableError(`The service is overloaded: too many ${cls} requests are waiting`, { retryAfterSeconds: 1 }));
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        since: Date.now(),
        admit: () => {
          clearTimeout(waiter.timer);
          observer?.waited(cls, Date.now() - waiter.since);
          resolve(this.releaser());
        },
        timer: setTimeout(() => {
          const i = this.waiting.indexOf(waiter);
          if (i >= 0) this.waiting.splice(i, 1);
          observer?.queueLength(cls, this.waiting.length);
          observer?.refused(cls, 'waited');
          reject(new ServiceUnavailableError(`The service is overloaded: a ${cls} request waited ${limits.maxWaitMs} ms for its turn`, { retryAfterSeconds: 1 }));
        }, limits.maxWaitMs),
      };
      this.waiting.push(waiter);
      observer?.queueLength(cls, this.waiting.length);
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      this.next();
    };
  }

  private next(): void {
    if (this.running >= this.limits.concurrency || this.waiting.length === 0) return;
    // A standing queue, when adaptive LIFO is on: newest first (the oldest age out at maxWaitMs).
    const standing = this.limits.lifoAfterMs > 0 && Date.now() - this.waiting[0].since > this.limits.lifoAfterMs;
    const waiter = standing ? this.waiting.pop()! : this.waiting.shift()!;
    this.running++;
    this.observer?.queueLength(this.cls, this.waiting.length);
    waiter.admit();
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

  /** Waits for a turn of `cls`; the function given back ends it (once, whatever happens). */
  enter(cls: CostClass): Promise<() => void> {
    return this.classes.get(cls)!.enter();
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
 * The limits of each class from the configuration: GraphQL operations (the costliest: a dashboard is tens of
 * milliseconds of CPU and megabytes of answer) as many as processors, REST reads three times, REST writes eight
 * times (each mostly waits on the database), subscription deliveries one batch at a time, never refused (a batch
 * waits for its turn; its updates are not dropped). docs/faults.md gives the measurements behind them.
 */
export function admissionLimits(config: Pick<Config, 'graphql' | 'admission'>): Record<CostClass, ClassLimits> {
  const { admission, graphql } = config;
  const rest = { queue: admission.queueLength, maxWaitMs: admission.maxWaitMs, lifoAfterMs: admission.lifoAfterMs };
  return {
    graphql: { concurrency: graphql.maxConcurrentOperations, queue: admission.queueLength, maxWaitMs: graphql.queueTimeoutMs, lifoAfterMs: admission.lifoAfterMs },
    'rest-read': { concurrency: admission.restReads, ...rest },
    'rest-write': { concurrency: admission.restWrites, ...rest },
    delivery: { concurrency: 1, queue: 1_000_000, maxWaitMs: 2 ** 31 - 1, lifoAfterMs: 0 },
  };
}

/**
 * The layers below in a turn of `cls`. A request whose client went away while it waited is not run: it would spend
 * the turn others wait for and, for a write, change data the client will believe unchanged and send again.
 */
export function admitted(admission: Admission, cls: CostClass | ((ctx: Parameters<AppMiddleware>[0]) => CostClass)): AppMiddleware {
  return async (ctx, next) => {
    const release = await admission.enter(typeof cls === 'function' ? cls(ctx) : cls);
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
