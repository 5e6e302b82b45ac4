import { withDatabase } from '../src/platform/database/admin';
import { startAppOn, type TestApp } from './support/app';
import { FAILOVER_ENV as ENV, capture, expectRules, logSummary, replicaReads, report, sleep, underLoad, type LogLine, type Outcome } from './support/failover-scenario';
import { pgbouncerMissing, startPgBouncer, type PgBouncer } from './support/pgbouncer';
import { replicaMissing, startReplicatedCluster, type ReplicatedCluster } from './support/replica-cluster';
import { startSwitchableProxy, type SwitchableProxy } from './support/switchable-proxy';

/**
 * Planned switchovers under load (issue 33): a primary and a synchronous streaming replica of this file's own
 * (`initdb`, `pg_basebackup -R`), the service in this process, a load of REST and GraphQL reads and writes (writes keyed
 * with Idempotency-Key, retried on 503 with the same key) running while the primary changes
 * (test/support/failover-scenario.ts):
 *
 * - through PgBouncer, as operators do it: PAUSE, the old primary stopped (fast), the replica promoted, PgBouncer's
 *   target changed + RELOAD + RESUME, the direct URL's proxy switched (the change decoder needs PostgreSQL itself);
 * - without stopping the old primary: fenced read-only (SQLSTATE 25006 on every write), the replica promoted, the
 *   address (a TCP proxy: a virtual IP, a DNS name) switched with the old connections left open, as they are when an
 *   address moves: the service must drop its connections to a server that takes no writes.
 *
 * The rules (docs/faults.md): every answer 2xx or 503 + Retry-After, never a 500; every acknowledged write on the new
 * primary, once per key; writes again within 5 s of the switch; the promoted replica no longer read from as a replica;
 * ready again by itself.
 */

const missing = replicaMissing() ?? pgbouncerMissing();
// An allowed skip (a part of the machine that .ci/run could not install, as Chromium is for the browser test): a machine without PostgreSQL's server binaries or PgBouncer (.ci/run says why).
const describeTopology = missing ? describe.skip : describe;
if (missing) console.warn(`topology.switchover: skipped: ${missing}`);

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
    expect(outcome.heldThroughSwitch).toBeGreaterThan(0);
    expect(outcome.refusedDuringSwitch).toBe(0);
  });

  it('no longer reads from the replica once it is promoted (pg_is_in_recovery false)', () => {
    expect(replicaReadsAfterSwitch.usable).toBe(0);
    expect(replicaReadsAfterSwitch.after - replicaReadsAfterSwitch.before).toBe(0);
  });
});

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

  it('answers /readyz 503 while the primary it reaches takes no writes (fenced), saying so', () => {
    expect(outcome.notReady.filter((m) => /^503 .*(writ|read-only|recovery)/i.test(m))).not.toEqual([]);
  });
});
