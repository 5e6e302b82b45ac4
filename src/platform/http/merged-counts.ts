import { RateLimiterRes } from 'rate-limiter-flexible';

/**
 * Local-first counting of request quotas (issue 34; docs/rate-limits.md, "Counted in memory, merged into the store").
 *
 * Every request used to send one upsert to the store, a write to the primary even when its reads went to a
 * replica. Here, the points consumed per key are kept in this instance's memory and merged into the store at most
 * every RATE_LIMIT_MERGE_MS, one statement for every key of every merged quota, which answers the store's totals:
 * the instance then knows each key's count across instances. A decision uses the store's total at the last merge
 * plus what this instance counted since (sent or not yet sent), so that a caller past its quota on one instance is
 * refused there at once, as before; what other instances counted since the last merge is seen at the next one.
 */

/** The operations of rate-limiter-flexible's limiters that we use, whatever the store. */
export interface Limiter {
  consume(key: string, points?: number): Promise<RateLimiterRes>;
  reward(key: string, points?: number): Promise<RateLimiterRes>;
  delete(key: string): Promise<boolean>;
}

/** One key's points to add, and the end of its window should the store start a new one (its first request here). */
export interface MergeRow {
  key: string;
  points: number;
  expire: number;
}

/** A key's total and window end in the store once the merge added to it. */
export interface MergedTotal {
  key: string;
  points: number;
  expire: number | null;
}

/** The one statement of a merge: adds each row's points (the store's upsert, batched) and answers the totals. */
type MergeStatement = (rows: MergeRow[]) => Promise<MergedTotal[]>;

export interface MergedCountsOptions {
  statement: MergeStatement;
  /** Deletes keys from the store (a quota's `delete`). */
  remove(keys: string[]): Promise<void>;
  /** RATE_LIMIT_MERGE_MS. */
  intervalMs: number;
  /** RATE_LIMIT_STORE_TIMEOUT_MS: a merge that takes longer counts as failed (its points stay in memory). */
  timeoutMs: number;
  /** Keys kept at most; past it, settled keys are forgotten (least recently used first). */
  maxEntries?: number;
  /** Called when a merge fails or times out (the throttled log line of the store's fallback). */
  onStoreFailure(err: unknown): void;
}

/** Default bound of the keys held: about 200 bytes each, 10 MB. */
const MAX_MERGED_KEYS = 50_000;

interface Entry {
  storeKey: string;
  quota: QuotaSpec;
  /** The store's total at the last merge (0 for a key this instance has not merged yet, or whose window ended). */
  base: number;
  /** Counted here, not sent yet. */
  pending: number;
  /** Sent with the merge under way. */
  inFlight: number;
  /** End of the window (ms since epoch): the store's once merged, else this instance's first request + the window. */
  expire: number;
}

interface QuotaSpec {
  keyPrefix: string;
  points: number;
  durationMs: number;
}

class TimeoutError extends Error {}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`rate limit merge took longer than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export class MergedCounts {
  private readonly entries = new Map<string, Entry>();
  private readonly maxEntries: number;
  private readonly timer: NodeJS.Timeout;
  private merging: Promise<void> | null = null;
  private stopped = false;
  /** Merge statements sent (each one for every key that had points to add). */
  merges = 0;

  constructor(private readonly opts: MergedCountsOptions) {
    this.maxEntries = opts.maxEntries ?? MAX_MERGED_KEYS;
    this.timer = setInterval(() => void this.merge(), opts.intervalMs);
    this.timer.unref();
  }

  /** Keys held now. */
  get size(): number {
    return this.entries.size;
  }

  /**
   * A quota counted here. `overflow` counts a key when the map is full of keys whose points are not merged yet
   * (one store statement for that count, as with RATE_LIMIT_MERGE_MS=0), until the next merge frees room.
   */
  limiter(spec: { keyPrefix: string; points: number; durationSeconds: number }, overflow: Limiter): Limiter {
    const quota: QuotaSpec = { keyPrefix: spec.keyPrefix, points: spec.points, durationMs: spec.durationSeconds * 1000 };
    return {
      consume: (key, points = 1) => this.consume(quota, key, points, overflow),
      reward: (key, points = 1) => this.reward(quota, key, points),
      delete: async (key) => {
        const storeKey = `${quota.keyPrefix}:${key}`;
        const had = this.entries.delete(storeKey);
        await this.opts.remove([storeKey]);
        return had;
      },
    };
  }

  private res(entry: Entry, now: number, first = false): RateLimiterRes {
    const consumed = entry.base + entry.inFlight + entry.pending;
    return new RateLimiterRes(Math.max(0, entry.quota.points - consumed), Math.max(0, entry.expire - now), consumed, first);
  }

  /** The key's entry, its window current; null when the map is full of keys not merged yet. */
  private entry(quota: QuotaSpec, key: string, now: number, create: boolean): Entry | null | undefined {
    const storeKey = `${quota.keyPrefix}:${key}`;
    let entry = this.entries.get(storeKey);
    if (entry) {
      // Most recently used last: eviction takes the oldest first.
      this.entries.delete(storeKey);
      this.entries.set(storeKey, entry);
      if (entry.expire <= now) {
        // Its window is over: what was counted in it (merged or not) no longer counts; a new window starts here.
        entry.base = 0;
        entry.pending = 0;
        entry.expire = now + quota.durationMs;
      }
      return entry;
    }
    if (!create) return undefined;
    if (this.entries.size >= this.maxEntries && !this.makeRoom(now)) return null;
    entry = { storeKey, quota, base: 0, pending: 0, inFlight: 0, expire: now + quota.durationMs };
    this.entries.set(storeKey, entry);
    return entry;
  }

  /** Forgets keys with nothing to merge (expired ones, then the least recently used), down to 90% of the bound. */
  private makeRoom(now: number): boolean {
    const target = Math.floor(this.maxEntries * 0.9);
    for (const [k, e] of this.entries) {
      if (e.expire <= now && e.inFlight === 0) this.entries.delete(k);
    }
    for (const [k, e] of this.entries) {
      if (this.entries.size <= target) break;
      if (e.pending === 0 && e.inFlight === 0) this.entries.delete(k);
    }
    if (this.entries.size < this.maxEntries) return true;
    // Full of points not merged yet: merge now rather than at the next tick.
    void this.merge();
    return false;
  }

  private async consume(quota: QuotaSpec, key: string, points: number, overflow: Limiter): Promise<RateLimiterRes> {
    const now = Date.now();
    const entry = this.entry(quota, key, now, true);
    if (!entry) return overflow.consume(key, points);
    // Spent: refused without counting, as the store's limiter blocks a spent key in memory until its window ends.
    if (entry.base + entry.inFlight + entry.pending >= quota.points && points > 0) throw this.res(entry, now);
    entry.pending += points;
    const res = this.res(entry, now, entry.base + entry.inFlight + entry.pending === points);
    if (res.consumedPoints > quota.points) throw res;
    return res;
  }

  private async reward(quota: QuotaSpec, key: string, points: number): Promise<RateLimiterRes> {
    const now = Date.now();
    const entry = this.entry(quota, key, now, points !== 0);
    // Nothing counted here for that key: a full quota as far as this instance knows (a read, `reward(key, 0)`).
    if (!entry) return new RateLimiterRes(quota.points, quota.durationMs, 0, false);
    entry.pending -= points;
    return this.res(entry, now);
  }

  /** Sends what was counted since the last merge, one statement for every key; at most one merge at a time. */
  merge(): Promise<void> {
    this.merging ??= this.mergeOnce().finally(() => {
      this.merging = null;
    });
    return this.merging;
  }

  private async mergeOnce(): Promise<void> {
    const now = Date.now();
    const batch: Entry[] = [];
    for (const [k, e] of this.entries) {
      if (e.expire <= now) {
        if (e.inFlight === 0) this.entries.delete(k);
        continue;
      }
      if (e.pending === 0) continue;
      e.inFlight = e.pending;
      e.pending = 0;
      batch.push(e);
    }
    if (batch.length === 0) return;
    let totals: MergedTotal[];
    try {
      this.merges++;
      totals = await withTimeout(this.opts.statement(batch.map((e) => ({ key: e.storeKey, points: e.inFlight, expire: e.expire }))), this.opts.timeoutMs);
    } catch (err) {
      // As the store's in-memory fallback: the points count in this instance's memory, never reach the store.
      for (const e of batch) {
        e.base += e.inFlight;
        e.inFlight = 0;
      }
      this.opts.onStoreFailure(err);
      return;
    }
    const byKey = new Map(totals.map((t) => [t.key, t]));
    const answered = Date.now();
    for (const e of batch) {
      const total = byKey.get(e.storeKey);
      if (total && (total.expire === null || total.expire > answered)) {
        // The store's total includes what was sent; what was counted meanwhile stays pending.
        e.base = total.points;
        if (total.expire !== null) e.expire = total.expire;
      } else {
        e.base += e.inFlight;
      }
      e.inFlight = 0;
    }
  }

  /** Merges everything counted until now (a merge under way may have left out the latest counts). */
  async flush(): Promise<void> {
    await this.merging;
    await this.merge();
  }

  /** Stops the timer and merges what is left (shutdown); later counts stay in memory. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.timer);
    await this.flush();
  }
}
