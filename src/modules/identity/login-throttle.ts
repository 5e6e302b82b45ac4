import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { TooManyRequestsError } from '../../platform/errors/errors';
import type { Quota, RateLimiters } from '../../platform/http/rate-limiters';
import { clientKey } from '../../platform/http/client-key';

/** Usernames are counted by a digest: no e-mail address in the counter store, and a bounded key length. */
const userKey = (username: string) => createHash('sha256').update(username.trim().toLowerCase()).digest('base64url').slice(0, 32);

/**
 * Brute-force protection of the password grant, after rate-limiter-flexible's login pattern: consecutive
 * failures of one username from one address (reset by a success), failures of one username from any
 * address, and failures from one address for any username. Each attempt is counted before the password
 * is checked and given back when it was right, so that concurrent guesses cannot outrun the counters: of
 * 40 simultaneous wrong passwords, only the first LOGIN_MAX_FAILURES_PER_USER_ADDRESS are checked at all.
 * While any of the three is spent, the grant answers 429 (slow_down), right password or not.
 */
export class LoginThrottle {
  constructor(private readonly limits: RateLimiters['login'], private readonly log?: Logger) {}

  /** Counts an attempt of `username` from `address`; throws TooManyRequestsError when it may not be tried. */
  async attempt(username: string, address: string): Promise<LoginAttempt> {
    const counters = this.counters(username, address);
    // One after the other, most specific first: an attempt refused by one counter is given back to those
    // before it and never reaches those after it, so it counts nowhere else (40 refused guesses of one
    // username from one address do not lock that username out at its other addresses).
    for (let i = 0; i < counters.length; i++) {
      const [quota, key] = counters[i];
      try {
        await quota.limiter.consume(key);
      } catch (err) {
        if (!(err instanceof RateLimiterRes)) {
          // Store and in-memory fallback both failed: let the password decide rather than lock everyone out.
          this.log?.warn({ err }, 'sign-in attempt not counted');
          continue;
        }
        await this.settle(counters.slice(0, i).map(([q, k]) => q.limiter.reward(k)));
        // Said once per lockout, by the attempt that started it (a flood would otherwise log every guess).
        if (err.consumedPoints === quota.points + 1) this.log?.warn({ policy: quota.name, key }, 'sign-in lockout: too many failed attempts');
        // A guess racing the one that started the lockout may still read the window's end; the lockout is shorter.
        const waitMs = quota.blockSeconds ? Math.min(err.msBeforeNext, quota.blockSeconds * 1000) : err.msBeforeNext;
        const retryAfter = Math.max(1, Math.ceil(waitMs / 1000));
        throw new TooManyRequestsError(`Too many failed sign-in attempts; try again in ${retryAfter} seconds`, retryAfter, quota);
      }
    }
    return {
      // A right password is no failure: clear the consecutive ones, give the attempt back to the others.
      succeeded: () => this.settle(counters.map(([quota, key], i) => (i === 0 ? quota.limiter.delete(key) : quota.limiter.reward(key)))),
      unchecked: () => this.settle(counters.map(([quota, key]) => quota.limiter.reward(key))),
    };
  }

  private async settle(operations: Promise<unknown>[]): Promise<void> {
    for (const r of await Promise.allSettled(operations)) {
      if (r.status === 'rejected') this.log?.warn({ err: r.reason }, 'sign-in counter not updated');
    }
  }

  /** The consecutive-failures counter first: a success deletes it. */
  private counters(username: string, address: string): [Quota, string][] {
    const user = userKey(username);
    const ip = clientKey(address);
    return [
      [this.limits.userAddress, `${user}:${ip}`],
      [this.limits.user, user],
      [this.limits.address, ip],
    ];
  }
}

export interface LoginAttempt {
  /** The password was right. */
  succeeded(): Promise<void>;
  /** The password could not be checked (the database failed): the attempt counts as nothing. */
  unchecked(): Promise<void>;
}
