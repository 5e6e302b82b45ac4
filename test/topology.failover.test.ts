import { withDatabase } from '../src/platform/database/admin';
import { startAppOn, type TestApp } from './support/app';
import { FAILOVER_ENV as ENV, capture, expectRules, logSummary, report, underLoad, type LogLine, type Outcome } from './support/failover-scenario';
import { replicaMissing, startReplicatedCluster, type ReplicatedCluster } from './support/replica-cluster';
import { startSwitchableProxy, type SwitchableProxy } from './support/switchable-proxy';

/**
 * Failover under load (issue 33): a primary and a streaming replica of this file's own (`initdb`, `pg_basebackup -R`),
 * the service in this process on a TCP proxy (DATABASE_URL, and so DATABASE_DIRECT_URL: a virtual IP, a DNS name) in
 * front of the primary, a load of REST and GraphQL reads and writes (writes keyed with Idempotency-Key, retried on 503
 * with the same key; test/support/failover-scenario.ts). The primary is killed (`pg_ctl stop -m immediate`), the
 * replica promoted, the address switched (its connections cut).
 *
 * The rules (docs/faults.md): every answer 2xx or 503 + Retry-After, never a 500; writes again within 5 s of the
 * switch; with synchronous replication every acknowledged write on the new primary, once per key; with asynchronous
 * replication the acknowledged writes lost are reported (the replica may lag the crash), not asserted.
 */

const missing = replicaMissing();
// An allowed skip (a part of the machine that .ci/run could not install, as Chromium is for the browser test): a machine without PostgreSQL's server binaries (.ci/run says why).
const describeTopology = missing ? describe.skip : describe;
if (missing) console.warn(`topology.failover: skipped: ${missing}`);

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
