import type { Logger } from 'pino';
import type { ChangeKind } from '../../platform/events/change-event';
import { backoffMs } from '../../platform/retry';

/** What a subscriber was told of the instance's hearing. */
type Interruption = 'owed' | 'told' | null;

/** A subscriber as the notices see it. */
export interface NoticeTarget {
  /** `owed`: the instance does not hear and this subscriber was not told yet; `told`: it was; null: nothing pending. */
  interruption: Interruption;
}

type Notice = 'interrupted' | 'resumed' | 'resync';

/** Waits between two failed announcements, doubling. */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 10_000;

/**
 * The feed's notices about the updates themselves (docs/subscriptions.md, "In band"), each retried until delivered
 * (a notice is most likely due exactly when the database fails):
 *
 * - `interrupted`, while the instance does not hear (its decoder or bus away, or not heard yet since its start): every
 *   subscriber once, and each new one as it subscribes;
 * - `resync`, once it hears again, when changes may have been missed meanwhile (a gap: a new slot, a stream that
 *   does not continue, an update that could not be prepared): every subscriber, who must refetch;
 * - `resumed`, once it hears again with no gap: whoever was told `interrupted` (what was held up comes in its own updates).
 *
 * A newer due notice supersedes one not yet delivered: hearing again before `interrupted` went out sends `resumed`
 * (or `resync`) alone.
 */
export class Notices<T extends NoticeTarget> {
  private hearing = false;
  private resyncOwed = false;
  /** Gaps seen so far: a resync delivered covers the gaps seen before it was prepared, not one seen meanwhile. */
  private gaps = 0;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private timer: NodeJS.Timeout | null = null;
  private wake: (() => void) | null = null;

  constructor(
    private readonly targets: () => Iterable<T>,
    /** Sends `kind` for what `targets` watch; resolves once delivered, rejects when it could not be prepared. */
    private readonly announce: (kind: ChangeKind, targets: T[]) => Promise<void>,
    private readonly log: Logger,
  ) {}

  /** A new subscriber: told at once that updates may be missing while the instance does not hear. */
  subscribed(target: T): void {
    if (this.hearing) return;
    target.interruption = 'owed';
    this.run();
  }

  setHearing(hearing: boolean): void {
    this.hearing = hearing;
    if (!hearing) for (const t of this.targets()) t.interruption ??= 'owed';
    this.run();
  }

  /** Changes may have been missed: whoever subscribes now is owed a resync (delivered once the instance hears). */
  gap(): void {
    // Nobody subscribed: nobody to resync.
    if (this.targets()[Symbol.iterator]().next().done) return;
    this.gaps++;
    this.resyncOwed = true;
    this.run();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.wake?.();
  }

  private due(): { kind: Notice; targets: T[] } | null {
    const all = [...this.targets()];
    if (!this.hearing) {
      const owed = all.filter((t) => t.interruption === 'owed');
      return owed.length ? { kind: 'interrupted', targets: owed } : null;
    }
    if (this.resyncOwed) return { kind: 'resync', targets: all };
    const interrupted = all.filter((t) => t.interruption !== null);
    return interrupted.length ? { kind: 'resumed', targets: interrupted } : null;
  }

  private run(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      // A retry waiting out its backoff: what is due may have changed, look now.
      this.wake?.();
      return;
    }
    this.running = this.loop().finally(() => {
      this.running = null;
      if (this.again) {
        this.again = false;
        this.run();
      }
    });
  }

  private async loop(): Promise<void> {
    let failures = 0;
    for (;;) {
      this.again = false;
      const due = this.due();
      if (!due || this.stopped) return;
      const gaps = this.gaps;
      try {
        await this.announce(due.kind, due.targets);
      } catch (err) {
        failures++;
        const wait = backoffMs(failures, RETRY_FIRST_MS, RETRY_MAX_MS);
        this.log.warn({ err, notice: due.kind, retry_in_ms: wait }, 'subscriptions: a notice could not be prepared; retrying until it is delivered');
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          this.timer = setTimeout(resolve, wait);
        });
        this.wake = null;
        continue;
      }
      failures = 0;
      if (due.kind === 'interrupted') {
        for (const t of due.targets) if (t.interruption === 'owed') t.interruption = 'told';
      } else {
        if (due.kind === 'resync' && this.gaps === gaps) this.resyncOwed = false;
        // Deaf again meanwhile: they are owed the news of it.
        for (const t of due.targets) t.interruption = this.hearing ? null : 'owed';
      }
    }
  }
}
