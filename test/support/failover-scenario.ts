import { DEMO_IDS, DEMO_USERS } from '../../src/seed/demo-data';
import type { TestApp } from './app';
import { tokenFor } from './auth';
import { FAULT_ENV, auditWrites, groupWrong, sleep, startLoad, type Load, type LoadSummary, type WriteAudit } from './failover-load';
import { request } from './http';

/**
 * One switch of the primary under load, for the topology tests of issue 33 (test/topology.switchover.test.ts,
 * test/topology.failover.test.ts): the load of test/support/failover-load.ts runs, `switchOver` does its steps (real
 * ones: PgBouncer's console, pg_ctl stop and promote, a proxy's target), the load goes on, then the new primary is
 * audited; readiness is sampled all along as a balancer's probe would. `expectRules` asserts the rules of
 * docs/faults.md on the outcome, one case per rule.
 */

const PRJ = DEMO_IDS.projects.residence;
/** The bound: writes succeed again within this of the address switch. */
const WRITES_AGAIN_MS = 5000;
/** Ready again (hearing the new primary's change messages) within this of the switch. */
const READY_AGAIN_MS = 10000;
const WARM_MS = 1500;
/**
 * How long the load runs after the switch, and its closed-loop clients per kind (REST reads, REST writes, GraphQL
 * queries, GraphQL mutations): 5 s and 2 in `npm test`; FAILOVER_AFTER_SWITCH_MS and FAILOVER_WORKERS make a heavier run.
 */
const AFTER_SWITCH_MS = Number(process.env.FAILOVER_AFTER_SWITCH_MS ?? 5000);
const WORKERS = Number(process.env.FAILOVER_WORKERS ?? 2);
export const FAILOVER_ENV = {
  ...FAULT_ENV,
  // Eight closed-loop GraphQL clients of one caller must not meet the caller's share (429): not what is tested here.
  GRAPHQL_MAX_CONCURRENT_OPERATIONS: '16',
  DATABASE_REPLICA_POLL_MS: '100',
};

export { sleep };

export interface Outcome {
  summary: LoadSummary;
  audit: WriteAudit;
  /** From the end of the switch to the first acknowledged write at or after it; null: none. */
  writesAgainMs: number | null;
  /** Readiness after the switch: how long until /readyz answered 200 (null: not within READY_AGAIN_MS + 1 s). */
  readyAgainMs: number | null;
  /** What /readyz answered from the switch on when not 200 (status and message, distinct). */
  notReady: string[];
  switchMs: number;
  /** When the switch's last step was done. */
  switchedAt: number;
  /** Requests started during the switch (between its first and last step) and answered 2xx after it: held, then served. */
  heldThroughSwitch: number;
  /** Refusals (503 / 409) answered to requests started after the switch's first step. */
  refusedDuringSwitch: number;
}

/** Runs `load` for a while, `switchOver` under it, and the load for AFTER_SWITCH_MS more; then audits the new primary. */
export async function underLoad(t: TestApp, prefix: string, newPrimaryDb: string, switchOver: () => Promise<void>): Promise<Outcome & { load: Load }> {
  const token = await tokenFor(t.url, DEMO_USERS.architect);
  // Readiness sampled all along, as a balancer's probe would.
  const readiness: Array<{ at: number; status: number; message?: string }> = [];
  let probing = true;
  const prober = (async () => {
    while (probing) {
      const res = await request(t.url, 'GET', '/readyz', { timeoutMs: 5000 }).catch(() => null);
      readiness.push({ at: Date.now(), status: res?.status ?? 0, message: res?.body?.message });
      await sleep(100);
    }
  })();
  const load = startLoad({
    baseUrl: t.url, token, projectId: PRJ, prefix,
    workers: { 'rest-read': WORKERS, 'rest-write': WORKERS, 'graphql-query': WORKERS, 'graphql-mutation': WORKERS },
  });
  await sleep(WARM_MS);
  const switchStarted = Date.now();
  let switchedAt = 0;
  try {
    await switchOver();
  } finally {
    switchedAt = Date.now();
  }
  await sleep(AFTER_SWITCH_MS);
  await load.stop();
  for (const until = switchedAt + READY_AGAIN_MS + 1000; Date.now() < until && !readiness.some((r) => r.at > switchedAt && r.status === 200);) await sleep(100);
  probing = false;
  await prober;
  const ready = readiness.find((r) => r.at > switchedAt && r.status === 200);
  const readyAgainMs = ready ? ready.at - switchedAt : null;
  const notReady = [...new Set(readiness.filter((r) => r.at >= switchStarted && r.status !== 200).map((r) => `${r.status} ${r.message}`))];
  const firstAck = load.firstAckAfter(switchedAt);
  return {
    load,
    switchedAt,
    summary: load.summary(),
    audit: await auditWrites(load, newPrimaryDb, prefix),
    writesAgainMs: firstAck === null ? null : firstAck - switchedAt,
    readyAgainMs,
    notReady,
    switchMs: switchedAt - switchStarted,
    heldThroughSwitch: load.answers.filter((a) => a.startedAt >= switchStarted && a.startedAt < switchedAt && a.endedAt >= switchedAt && a.verdict === 'ok').length,
    refusedDuringSwitch: load.answers.filter((a) => a.startedAt >= switchStarted && a.verdict !== 'ok' && a.verdict !== 'wrong').length,
  };
}

export function report(label: string, o: Outcome, extra: Record<string, unknown> = {}): void {
  console.log(`${label}\n${JSON.stringify({
    switch_ms: o.switchMs,
    requests: o.summary.requests,
    by_status: o.summary.byStatus,
    wrong: groupWrong(o.summary.wrong),
    longest_refusal_ms: o.summary.longestRefusalMs,
    longest_write_gap_ms: o.summary.longestWriteGapMs,
    writes_again_after_switch_ms: o.writesAgainMs,
    ready_again_after_switch_ms: o.readyAgainMs,
    not_ready_answers: o.notReady,
    held_through_switch_then_served: o.heldThroughSwitch,
    refused_after_switch_began: o.refusedDuringSwitch,
    writes: { ...o.summary.writes, lost_acknowledged: o.audit.lost.length, duplicated: o.audit.duplicated.length, stored_unacknowledged: o.audit.storedUnacknowledged },
    ...extra,
  }, null, 1)}`);
}

export type LogLine = Record<string, unknown> & { msg: string; time: string };
export const capture = (lines: LogLine[]) => ({ write: (line: string) => void lines.push(JSON.parse(line)) });

/** The service's log lines about the database and its change events after the switch began, counted by message. */
export function logSummary(lines: LogLine[], o: Outcome): Record<string, number> {
  const from = o.switchedAt - o.switchMs;
  const counts: Record<string, number> = {};
  for (const l of lines) {
    if (Date.parse(l.time) < from || l.msg === 'request') continue;
    const msg = l.msg.slice(0, 120);
    counts[msg] = (counts[msg] ?? 0) + 1;
  }
  return counts;
}

/** Reads per target (`primary`, or the replica's name) from the app's /metrics; and whether the replica is usable. */
export async function replicaReads(url: string): Promise<{ replica: number; usable: number | null }> {
  const text = (await request(url, 'GET', '/metrics')).text;
  const replica = [...text.matchAll(/^db_reads_total\{target="([^"]+)"\} (\d+)$/gm)].filter((m) => m[1] !== 'primary').reduce((s, m) => s + Number(m[2]), 0);
  const usable = /^db_replica_usable\{[^}]*\} (\d+)$/m.exec(text);
  return { replica, usable: usable ? Number(usable[1]) : null };
}

/** The shared assertions of a switch: named after the rules. */
export function expectRules(outcome: () => Outcome, opts: { lossless: boolean }): void {
  it('answers every request 2xx or 503 + Retry-After in its endpoint\'s shape, never a 500', () => {
    const o = outcome();
    expect(groupWrong(o.summary.wrong)).toEqual({});
    expect(o.summary.requests).toBeGreaterThan(50);
  });

  it('takes writes again within 5 s of the switch', () => {
    expect(outcome().writesAgainMs).not.toBeNull();
    expect(outcome().writesAgainMs).toBeLessThan(WRITES_AGAIN_MS);
  });

  it('stores every write once per Idempotency-Key: none twice', () => {
    expect(outcome().audit.duplicated).toEqual([]);
  });

  if (opts.lossless) {
    it('keeps every acknowledged write on the new primary (synchronous replication): none lost', () => {
      const o = outcome();
      expect(o.audit.acknowledged).toBeGreaterThan(5);
      expect(o.audit.lost).toEqual([]);
    });
  }

  it('is ready again by itself within 10 s of the switch (/readyz 200: it hears the new primary)', () => {
    expect(outcome().readyAgainMs).not.toBeNull();
    expect(outcome().readyAgainMs).toBeLessThan(READY_AGAIN_MS);
  });
}
