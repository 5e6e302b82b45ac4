import { withDatabase } from '../src/platform/database/database';
import { DEMO_IDS, DEMO_USERS } from '../src/seed/demo-data';
import { startAppOn, type TestApp } from './support/app';
import { tokenFor } from './support/auth';
import { auditWrites, groupWrong, startLoad, type Load, type LoadSummary, type WriteAudit } from './support/failover-load';
import { request } from './support/http';
import { pgbouncerMissing, startPgBouncer, type PgBouncer } from './support/pgbouncer';
import { replicaMissing, startReplicatedCluster, type ReplicatedCluster } from './support/replica-cluster';
import { startSwitchableProxy, type SwitchableProxy } from './support/switchable-proxy';

/**
 * Switchover and failover under load (issue 33): a primary and a streaming replica of this file's own (`initdb`,
 * `pg_basebackup -R`), the service in this process in front of them, a load of REST and GraphQL reads and writes
 * (writes keyed with Idempotency-Key and retried on 503 with the same key) running while the primary is stopped,
 * the replica promoted and the address switched. Real faults: PgBouncer's console, `pg_ctl stop`, `pg_ctl promote`,
 * a TCP proxy whose target changes (a virtual IP, a DNS name).
 *
 * The rules (docs/faults.md): every answer 2xx or 503 + Retry-After in its endpoint's shape, never a 500; every
 * acknowledged write on the new primary, once per key (synchronous replication); writes taken again within 5 s of
 * the switch; the promoted replica no longer read from as a replica; ready again by itself.
 */

const PRJ = DEMO_IDS.projects.residence;
/** The bound: writes succeed again within this of the address switch. */
const WRITES_AGAIN_MS = 5000;
/** Ready again (hearing the new primary's change messages) within this of the switch. */
const READY_AGAIN_MS = 10000;
const WARM_MS = 1500;
const AFTER_SWITCH_MS = 5000;
const ENV = {
  LOG_LEVEL: 'info',
  DATABASE_CONNECT_TIMEOUT_MS: '1000',
  READINESS_TIMEOUT_MS: '1000',
  LISTENER_HEARTBEAT_INTERVAL_MS: '500',
  LISTENER_HEARTBEAT_TIMEOUT_MS: '1000',
  // Eight closed-loop GraphQL clients of one caller must not meet the caller's share (429): not what is tested here.
  GRAPHQL_MAX_CONCURRENT_OPERATIONS: '16',
  DATABASE_REPLICA_POLL_MS: '100',
};

const missing = replicaMissing() ?? pgbouncerMissing();
// The one allowed skip, as for Chromium: a machine without PostgreSQL's server binaries or PgBouncer (.ci/run says why).
const describeTopology = missing ? describe.skip : describe;
if (missing) console.warn(`topology.failover: skipped: ${missing}`);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Outcome {
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
  /** Refusals (503 / 409) answered to requests started after the switch's first step. */
  refusedDuringSwitch: number;
}

/** Runs `load` for a while, `switchOver` under it, and the load for AFTER_SWITCH_MS more; then audits the new primary. */
async function underLoad(t: TestApp, prefix: string, newPrimaryDb: string, switchOver: () => Promise<void>): Promise<Outcome & { load: Load }> {
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
  const load = startLoad({ baseUrl: t.url, token, projectId: PRJ, prefix });
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
    refusedDuringSwitch: load.answers.filter((a) => a.startedAt >= switchStarted && a.verdict !== 'ok' && a.verdict !== 'wrong').length,
  };
}

function report(label: string, o: Outcome, extra: Record<string, unknown> = {}): void {
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
    refused_after_switch_began: o.refusedDuringSwitch,
    writes: { ...o.summary.writes, lost_acknowledged: o.audit.lost.length, duplicated: o.audit.duplicated.length, stored_unacknowledged: o.audit.storedUnacknowledged },
    ...extra,
  }, null, 1)}`);
}

type LogLine = Record<string, unknown> & { msg: string; time: string };
const capture = (lines: LogLine[]) => ({ write: (line: string) => void lines.push(JSON.parse(line)) });

/** The service's log lines about the database and its change events after the switch began, counted by message. */
function logSummary(lines: LogLine[], o: Outcome): Record<string, number> {
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
async function replicaReads(url: string): Promise<{ replica: number; usable: number | null }> {
  const text = (await request(url, 'GET', '/metrics')).text;
  const replica = [...text.matchAll(/^db_reads_total\{target="([^"]+)"\} (\d+)$/gm)].filter((m) => m[1] !== 'primary').reduce((s, m) => s + Number(m[2]), 0);
  const usable = /^db_replica_usable\{[^}]*\} (\d+)$/m.exec(text);
  return { replica, usable: usable ? Number(usable[1]) : null };
}

/** The shared assertions of a switch: named after the rules. */
function expectRules(outcome: () => Outcome, opts: { lossless: boolean }): void {
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

describeTopology('switchover through PgBouncer: PAUSE, old primary stopped (fast), replica promoted, RELOAD to it, RESUME', () => {
  let cluster: ReplicatedCluster;
  let pooler: PgBouncer;
  let directProxy: SwitchableProxy;
  let t: TestApp;
  let outcome: Outcome;
  let replicaReadsAfterSwitch = { before: 0, after: 0, usable: null as number | null };
  let sampled: Promise<void> = Promise.resolve();
  const logLines: LogLine[] = [];

  beforeAll(async () => {
    cluster = await startReplicatedCluster('switchover', 0, { synchronous: true });
    await cluster.createDatabase('tender');
    // Its query_wait_timeout above the service's bounds: a request held by PAUSE is bounded by the service's own limits.
    pooler = await startPgBouncer(cluster.primaryUrl, { default_pool_size: '10', query_wait_timeout: '30' });
    // The decoder needs PostgreSQL itself (a replication connection): the direct URL follows the primary through a proxy.
    directProxy = await startSwitchableProxy(cluster.primaryUrl);
    t = await startAppOn(pooler.url('tender'), {
      ...ENV,
      DATABASE_DIRECT_URL: withDatabase(directProxy.url, 'tender'),
      DATABASE_REPLICA_URLS: withDatabase(cluster.replicaUrl, 'tender'),
    }, undefined, capture(logLines));
    const o = await underLoad(t, 'switchover', withDatabase(cluster.replicaUrl, 'tender'), async () => {
      await pooler.admin('PAUSE tender');
      await cluster.stopPrimary('fast');
      await cluster.promote();
      await pooler.retarget(cluster.replicaUrl);
      await pooler.admin('RESUME tender');
      directProxy.switchTo(cluster.replicaUrl, { cut: true });
      // Counted from one poll period and more after the promotion, while the load goes on.
      sampled = sleep(500).then(async () => {
        replicaReadsAfterSwitch.before = (await replicaReads(t.url)).replica;
      });
    });
    await sampled;
    const after = await replicaReads(t.url);
    replicaReadsAfterSwitch = { ...replicaReadsAfterSwitch, after: after.replica, usable: after.usable };
    outcome = o;
    report('switchover through PgBouncer (synchronous replica)', o, {
      replica_reads_after_switch: after.replica - replicaReadsAfterSwitch.before, replica_usable: after.usable, log: logSummary(logLines, o),
    });
  }, 120000);
  afterAll(async () => {
    await t?.close();
    await pooler?.stop();
    await directProxy?.close();
    await cluster?.stop();
  });

  expectRules(() => outcome, { lossless: true });

  it('holds requests during PAUSE and serves them after RESUME: none refused', () => {
    expect(outcome.refusedDuringSwitch).toBe(0);
  });

  it('no longer reads from the replica once it is promoted (pg_is_in_recovery false)', () => {
    expect(replicaReadsAfterSwitch.usable).toBe(0);
    expect(replicaReadsAfterSwitch.after - replicaReadsAfterSwitch.before).toBe(0);
  });
});

/** A failover through a switchable address (DATABASE_URL and DATABASE_DIRECT_URL both on it). */
function failover(name: string, synchronous: boolean): void {
  describeTopology(`failover (${synchronous ? 'synchronous' : 'asynchronous'} replica): primary killed (immediate), replica promoted, the address switched`, () => {
    let cluster: ReplicatedCluster;
    let proxy: SwitchableProxy;
    let t: TestApp;
    let outcome: Outcome;
    const logLines: LogLine[] = [];

    beforeAll(async () => {
      cluster = await startReplicatedCluster(name, 0, { synchronous });
      await cluster.createDatabase('tender');
      proxy = await startSwitchableProxy(cluster.primaryUrl);
      t = await startAppOn(withDatabase(proxy.url, 'tender'), ENV, undefined, capture(logLines));
      outcome = await underLoad(t, name, withDatabase(cluster.replicaUrl, 'tender'), async () => {
        await cluster.stopPrimary('immediate');
        await cluster.promote();
        proxy.switchTo(cluster.replicaUrl, { cut: true });
      });
      report(`failover, ${synchronous ? 'synchronous' : 'asynchronous'} replica`, outcome, { log: logSummary(logLines, outcome) });
    }, 120000);
    afterAll(async () => {
      await t?.close();
      await proxy?.close();
      await cluster?.stop();
    });

    expectRules(() => outcome, { lossless: synchronous });

    if (!synchronous) {
      it('reports the acknowledged writes lost with asynchronous replication (not asserted: the replica may lag the crash)', () => {
        console.log(`failover, asynchronous replica: ${outcome.audit.lost.length} of ${outcome.audit.acknowledged} acknowledged writes lost`);
        expect(outcome.audit.acknowledged).toBeGreaterThan(5);
      });
    }
  });
}

failover('failover-sync', true);
failover('failover-async', false);

describeTopology('the address switched while the old primary still answers, read-only (fenced), its connections kept', () => {
  let cluster: ReplicatedCluster;
  let proxy: SwitchableProxy;
  let t: TestApp;
  let outcome: Outcome;
  const logLines: LogLine[] = [];

  beforeAll(async () => {
    cluster = await startReplicatedCluster('fenced', 0, { synchronous: true });
    await cluster.createDatabase('tender');
    proxy = await startSwitchableProxy(cluster.primaryUrl);
    t = await startAppOn(withDatabase(proxy.url, 'tender'), ENV, undefined, capture(logLines));
    outcome = await underLoad(t, 'fenced', withDatabase(cluster.replicaUrl, 'tender'), async () => {
      await cluster.fencePrimary();
      await cluster.promote();
      // New connections reach the new primary; those open stay on the old one (no cut).
      proxy.switchTo(cluster.replicaUrl);
    });
    report('address switched, old primary read-only and its connections kept', outcome, { proxy_open_connections: proxy.open, log: logSummary(logLines, outcome) });
  }, 120000);
  afterAll(async () => {
    await t?.close();
    await proxy?.close();
    await cluster?.stop();
  });

  // Its pooled connections to the read-only server are discarded on 25006: writes reach the new primary, no restart.
  expectRules(() => outcome, { lossless: true });
});
