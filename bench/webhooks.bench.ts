import 'reflect-metadata';
import { burst } from './webhooks-burst';
import { clearWebhooks, startWebhooksCluster } from './webhooks-cluster';
import { tarpitPart } from './webhooks-tarpit';
import { throughput } from './webhooks-throughput';

/**
 * Webhooks (figures in docs/benchmarks.md, "Webhooks"), in parts: BENCH_WEBHOOKS_PARTS, comma-separated, default
 * `burst,throughput,tarpit`.
 *
 * - **burst** (issue 26; bench/webhooks-burst.ts, described there): 100 transactions of 100 answers, three endpoints,
 *   the service in this process on a scratch database of the embedded cluster: commit to receipt, attempts per second,
 *   and the write cost the outbox adds per version.
 *
 * The two parts of issue 40 share a PostgreSQL cluster of their own (bench/bench-cluster.ts, bench/webhooks-cluster.ts):
 * the machine's PostgreSQL 15 (BENCH_WEBHOOKS_PG_BIN names another binaries directory) as the `postgres` user, data
 * under .data/bench-webhooks (reset at each run), a free port, `fsync`, `synchronous_commit` and `full_page_writes` on,
 * `wal_level = logical`, `shared_buffers = 256MB`, `max_connections = 200`, and `pg_stat_statements` preloaded when the
 * binaries have it (BENCH_WEBHOOKS_PGSS=0: not). One database, migrated, the demo data and BENCH_PROJECTS projects of
 * bench/dataset.ts (default 1,000, as write-ceiling), analyzed. Every endpoint and the outbox are emptied before each
 * part. The service runs as processes of the built service (bench/fanout-fleet.ts: dist/src/server.js, production
 * configuration, the fleet hearing the outbox through the change bus, BENCH_WEBHOOKS_BUS, default the machine's Redis,
 * keys of the run's own, deleted after (`none`: each instance decoding the WAL itself), its log under .data/bench-webhooks/instances, rate limits in
 * memory and lifted, the API's quota at 100,000,000 requests a window) with WEBHOOK_DELIVERY=true, DATABASE_POOL_SIZE=10
 * (the default: fanout's fleet has 2), WEBHOOK_HTTPS_ONLY=false and WEBHOOK_ALLOWED_NETWORKS=127.0.0.0/8 (loopback is
 * refused unless named), plus BENCH_SERVER_ENV (JSON). A new fleet per configuration.
 *
 * - **throughput** (bench/webhooks-throughput.ts): "deliveries/s against commits/s with 32 writers". One endpoint per
 *   organization of the data set (Atelier Demo, Atelier Nord: the demo architect administers both, so they are made
 *   over REST), `contractor.answered`, pointing at a receiver in this process that answers 200 at once
 *   (bench/webhooks-receivers.ts; it keeps the first receipt of each `webhook-id` and counts repeats).
 *   WEBHOOK_MAX_ATTEMPTS_PER_SECOND=100000 (no pacing, as write-ceiling); the other webhook settings as the build ships
 *   them. Writers: bench/write-ceiling-writers.ts in a process of its own, BENCH_WRITERS (32) `pg`
 *   connections, one ANSWERED version per autocommit INSERT, each writer on its own projects, held at
 *   BENCH_WEBHOOKS_RATE commits/s in all (default 1,000, near what write-ceiling's 32 writers reach with capture on:
 *   the same offered load for every configuration). Configurations BENCH_WEBHOOKS_INSTANCES (default `1,2`); each: a
 *   new fleet, the outbox emptied, a warm-up of BENCH_WARMUP_SECONDS (3) at the rate, drained, the webhook tables
 *   analyzed, a checkpoint, then BENCH_SECONDS (20) measured. Reported: commits/s achieved; deliveries queued/s (rows
 *   of webhook_delivery added); deliveries received/s during the window and their ratio to commits/s (target ≥ 1x);
 *   pending deliveries when the writers stop; time to drain (the writers' stop to the last receipt of the window's
 *   commits, at most BENCH_DRAIN_SECONDS, default 120); duplicates; unsuccessful attempts; commit → receipt p50 / p99 /
 *   max (each commit timed when its COMMIT returns, on the epoch clock the processes of this machine share, matched
 *   with its delivery by the payload's `data.document_id` and `data.version`); CPU over the window (bench/proc-cpu.ts):
 *   the instances, PostgreSQL (postmaster and children), the writers, this process (the receiver), the machine's idle.
 *   With pg_stat_statements: reset at the window's start, read at its end, the statements naming a webhook table by
 *   total time (calls, mean, total, rows; the claim is `with due as`, or `webhook_claim` once claims are a function, the
 *   record `jsonb_to_recordset`), and the writers' INSERT (the outbox's trigger inside); BENCH_WEBHOOKS_PGSS_TRACK=all
 *   counts the statements inside functions and triggers too.
 *   BENCH_WEBHOOKS_PROFILE=1: the instances run with `--cpu-prof` (files under .data/bench-webhooks/profiles/), cut to
 *   the window (bench/webhooks-profile.ts): self time by area (pg client, decoding, signature, HTTP and sockets, the
 *   delivery loop's code, event loop, GC...), the top functions by self time, and the webhooks module's functions with
 *   what they call synchronously. The receiver's share is this process's CPU; the database's, pg_stat_statements.
 * - **tarpit** (bench/webhooks-tarpit.ts): "the other tenant's delay under the tarpit flood". Atelier Demo (A) has
 *   BENCH_TARPIT_ENDPOINTS (12) endpoints on a tarpit (a TCP server on loopback that accepts and never answers nor
 *   closes); Atelier Nord (B) one on a receiver answering 200 at once. The webhooks' settings as the build ships them (at
 *   2821530: WEBHOOK_TIMEOUT 10 s, WEBHOOK_CONCURRENCY 32, WEBHOOK_MAX_ATTEMPTS_PER_SECOND 100, retry after 5 s) but the
 *   two above, and WEBHOOK_MANUAL_SENDS_PER_MINUTE=10000 (an API limit on test events per endpoint, 20 a minute where a
 *   build has it: B's endpoint gets 80 in a minute; a 429 is waited out and retried all the same, and counted). Per
 *   configuration (BENCH_TARPIT_INSTANCES, default `1,2`): first nothing else queued (baseline): B's test event
 *   (POST /api/svc/v1/webhooks/{id}/test) every BENCH_TARPIT_GAP_MS (500) for BENCH_SECONDS, each timed from its 202 to
 *   its receipt (by `webhook-id`, the event's id in the 202); then A's flood, BENCH_TARPIT_TESTS (10) test events per
 *   endpoint, the endpoints at once, each endpoint's one after the other, as fast as the API answers (its quotas are
 *   lifted, above); at once B's test events as before. Receipts are waited for up to BENCH_TARPIT_WAIT_SECONDS (90)
 *   after the last. Reported: p50, p99 and max delay, and how many arrived; the most connections the tarpit held at once.
 */

const PARTS = (process.env.BENCH_WEBHOOKS_PARTS ?? 'burst,throughput,tarpit').split(',').map((p) => p.trim());
const PROJECTS = Number(process.env.BENCH_PROJECTS ?? 1000);

export async function run(): Promise<void> {
  const unknown = PARTS.filter((p) => !['burst', 'throughput', 'tarpit'].includes(p));
  if (unknown.length) throw new Error(`webhooks: BENCH_WEBHOOKS_PARTS: unknown part(s) ${unknown.join(', ')}; known: burst, throughput, tarpit`);
  if (PARTS.includes('burst')) await burst();
  if (!PARTS.includes('throughput') && !PARTS.includes('tarpit')) return;
  const db = await startWebhooksCluster(PROJECTS);
  try {
    if (PARTS.includes('throughput')) {
      await clearWebhooks(db.admin);
      await throughput(db);
    }
    if (PARTS.includes('tarpit')) {
      await clearWebhooks(db.admin);
      await tarpitPart(db);
    }
  } finally {
    await db.admin.end().catch(() => undefined);
    db.cluster.stop();
  }
}
