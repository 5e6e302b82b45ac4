import { LRUCache } from 'lru-cache';
import type { Caller } from './caller';

/** A caller no other request shares: its lists too (a Caller holds nothing deeper than arrays of ids). */
const copyOf = (caller: Caller): Caller => ({
  ...caller,
  adminOrganizationIds: [...caller.adminOrganizationIds],
  adminHeadquarterIds: [...caller.adminHeadquarterIds],
});

/**
 * Callers (who a token's user is, and where they are Administrator) kept between requests, so that a burst of
 * requests with one token does not look its user up again each time (docs/caching.md, "Callers").
 *
 * It stays correct when a role is removed: every write that changes a user's rights notifies the instances
 * (Migration20270105000000_caller_changes), and the entry is forgotten as the notification arrives, a few
 * milliseconds after the commit. Callers are kept only while the instance listens for those notifications:
 * while it does not (database restarted, connection lost), every request looks its caller up, and everything
 * kept before is forgotten, since a notification may have been missed. An entry also expires after
 * `ttlMs` whatever happens, a bound on a notification lost in a way the listener cannot see.
 *
 * A lookup that began before a notification is not kept: it may have read the rights before the change.
 */
export class CallerCache {
  private readonly entries: LRUCache<string, Caller> | null;
  /** Counts the notifications: a lookup keeps its answer only if none arrived while it ran. */
  private generation = 0;
  private listening = false;

  constructor(ttlMs: number, max = 10000) {
    this.entries = ttlMs > 0 ? new LRUCache<string, Caller>({ max, ttl: ttlMs }) : null;
  }

  /** Whether the instance hears every authorization change; keeping starts and stops with it. */
  setListening(listening: boolean): void {
    this.listening = listening;
    this.forget('*');
  }

  /** A user's rights changed (`*`: any user's). */
  forget(userId: string): void {
    this.generation++;
    if (userId === '*') this.entries?.clear();
    else this.entries?.delete(userId.toLowerCase());
  }

  /**
   * The caller of `userId`: the one kept, or `lookUp()`'s, kept when it can be. Each request gets its own copy:
   * a request may change its caller (switching the current organization), its lists included.
   */
  async get(userId: string, lookUp: () => Promise<Caller>): Promise<Caller> {
    if (!this.entries || !this.listening) return lookUp();
    const key = userId.toLowerCase();
    const kept = this.entries.get(key);
    if (kept) return copyOf(kept);
    const generation = this.generation;
    const caller = await lookUp();
    if (this.listening && generation === this.generation) this.entries.set(key, copyOf(caller));
    return caller;
  }
}
