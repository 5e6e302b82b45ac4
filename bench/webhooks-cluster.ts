import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { MikroORM } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import { ormConfig } from '../mikro-orm.config';
import { adminQuery, withDatabase } from '../src/platform/database/admin';
import { DEMO_IDS, loadDemoData } from '../src/seed/demo-data';
import { freePort } from '../test/support/ports';
import { startCluster, type Cluster } from './bench-cluster';
import { sleep } from './commit-latency';
import { buildDataset } from './dataset';

// What bench/webhooks-throughput.ts and bench/webhooks-tarpit.ts share: the cluster of their own and its database,
// the service's environment, endpoints made over REST, the outbox's counts, and pg_stat_statements.

const PG_BIN = process.env.BENCH_WEBHOOKS_PG_BIN ?? '/usr/lib/postgresql/15/bin';
export const ROOT = path.resolve('.data/bench-webhooks');
/** pg_stat_statements.track: `top` (a function's or trigger's statements count in the one that called it) or `all`. */
const TRACK = process.env.BENCH_WEBHOOKS_PGSS_TRACK === 'all' ? 'all' : 'top';

export interface WebhooksCluster {
  cluster: Cluster;
  url: string;
  admin: Client;
  /** pg_stat_statements loaded and created in the database. */
  statements: boolean;
}

/** The demo architect administers both: their endpoints are made over REST. */
export const ORGANIZATIONS = { a: DEMO_IDS.organizations.atelierDemo, b: DEMO_IDS.organizations.atelierNord };

/**
 * The cluster (bench/bench-cluster.ts, durable as production, data under .data/bench-webhooks), with pg_stat_statements
 * preloaded when the binaries have it (BENCH_WEBHOOKS_PGSS=0: not); one database migrated, with the demo data and
 * `projects` projects of bench/dataset.ts, analyzed.
 */
export async function startWebhooksCluster(projects: number): Promise<WebhooksCluster> {
  const started = performance.now();
  const statements = process.env.BENCH_WEBHOOKS_PGSS !== '0' && existsSync(path.join(PG_BIN, '..', 'lib', 'pg_stat_statements.so'));
  const cluster = startCluster(await freePort(), {
    root: ROOT, pgBin: PG_BIN, bench: 'webhooks', pgBinVariable: 'BENCH_WEBHOOKS_PG_BIN', source: 'bench/webhooks.bench.ts',
    // 32 writers, two instances' pools (requests, delivery, decoding) and the bench's connections.
    settings: ['shared_buffers = 256MB', 'max_connections = 200',
      ...(statements ? ["shared_preload_libraries = 'pg_stat_statements'", `pg_stat_statements.track = ${TRACK}`] : [])],
  });
  const url = withDatabase(cluster.serverUrl, 'webhooks');
  const admin = new Client({ connectionString: url, application_name: 'webhooks admin' });
  try {
    await adminQuery(cluster.serverUrl, 'create database webhooks');
    const orm = await MikroORM.init(ormConfig(url, { pool: { min: 0, max: 2 } }));
    try {
      await orm.getMigrator().up();
      await loadDemoData(orm.em.fork());
      const counts = await buildDataset(<T>(sql: string) => orm.em.fork().getConnection().execute(sql) as Promise<T>, { projects });
      console.log(`webhooks: own cluster on 127.0.0.1:${cluster.port} (${PG_BIN}); data set of ${counts.projects} projects, ${counts.documents} documents, `
        + `${counts.versions} versions, ready ${((performance.now() - started) / 1000).toFixed(1)} s after the start; pg_stat_statements ${statements ? 'on' : 'off'}`);
    } finally {
      await orm.close(true);
    }
    await admin.connect();
    await admin.query('analyze');
    if (statements) await admin.query('create extension if not exists pg_stat_statements');
  } catch (err) {
    await admin.end().catch(() => undefined);
    cluster.stop();
    throw err;
  }
  return { cluster, url, admin, statements };
}

/**
 * The service's environment in these parts (added to bench/fanout-fleet.ts's): it delivers, with the default pool,
 * and may reach the bench's receivers on loopback (over http). Nothing else of the webhooks' settings is changed here.
 */
export const DELIVERING = {
  WEBHOOK_DELIVERY: 'true', DATABASE_POOL_SIZE: '10', WEBHOOK_HTTPS_ONLY: 'false', WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
};

/** Creates an endpoint over REST as the demo architect; its id. */
export async function createEndpoint(baseUrl: string, token: string, organizationId: string, url: string, description: string): Promise<string> {
  const res = await fetch(`${baseUrl}/api/svc/v1/webhooks`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ organization_id: organizationId, url, event_types: ['contractor.answered'], description }),
  });
  const body = await res.text();
  if (res.status !== 201) throw new Error(`webhooks: creating an endpoint answered ${res.status}: ${body}`);
  return (JSON.parse(body) as { webhook: { id: string } }).webhook.id;
}

export const EMPTY_OUTBOX = 'truncate webhook_attempt, webhook_delivery, webhook_event';

/** Every endpoint and the outbox emptied (the parts start alike). */
export async function clearWebhooks(admin: Client): Promise<void> {
  await admin.query(EMPTY_OUTBOX);
  await admin.query('delete from webhook_endpoint');
}

export async function outbox(admin: Client): Promise<{ total: number; pending: number }> {
  const { rows: [r] } = await admin.query<{ total: number; pending: number }>(`select count(*)::int as total,
    count(*) filter (where status = 'pending')::int as pending from webhook_delivery`);
  return r;
}

/** After a fleet's stop: until the server has no WAL sender left, then the slots left behind dropped (as fanout). */
/**
 * How a fleet hears the outbox's wake-ups: through the change bus (issue 39's production topology: one decoder for
 * the fleet) at BENCH_WEBHOOKS_BUS (default the machine's redis://127.0.0.1:6379), keys under a prefix of this run's
 * own, deleted after; `none`: each instance decodes the WAL itself.
 */
export function changeBus(label: string): { mode: 'bus' | 'own'; busUrl: string; busKeyPrefix: string; clear(): Promise<void> } {
  const url = process.env.BENCH_WEBHOOKS_BUS ?? 'redis://127.0.0.1:6379';
  if (url === 'none') return { mode: 'own', busUrl: '', busKeyPrefix: '', clear: async () => undefined };
  const busKeyPrefix = `bench-webhooks-${label}-${randomBytes(4).toString('hex')}`;
  return {
    mode: 'bus', busUrl: url, busKeyPrefix,
    clear: async () => {
      const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
      try {
        const keys = await redis.keys(`${busKeyPrefix}:*`);
        if (keys.length) await redis.del(...keys);
      } finally {
        redis.disconnect();
      }
    },
  };
}

export async function afterFleet(admin: Client): Promise<void> {
  for (const until = Date.now() + 15_000; Date.now() < until;) {
    const { rows: [r] } = await admin.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where backend_type = 'walsender'`);
    if (r.n === 0) break;
    await sleep(200);
  }
  await admin.query('select pg_drop_replication_slot(slot_name) from pg_replication_slots where not active');
}

export interface StatementFigures {
  label: string;
  calls: number;
  meanMs: number;
  totalMs: number;
  rows: number;
  query: string;
}

/** What a statement is, from its text. */
function statementLabel(query: string): string {
  if (/with due as|webhook_claim/i.test(query)) return 'claim';
  if (/jsonb_to_recordset/i.test(query) && /insert into webhook_attempt/i.test(query)) return 'record';
  if (/failing_since/i.test(query)) return 'endpoint health';
  if (/^\s*insert into document_version/i.test(query)) return 'writers\' insert (the outbox\'s trigger in it)';
  return 'other';
}

/**
 * pg_stat_statements of this database since its last reset (with track = top, a trigger's or function's statements
 * count in the one that called it): the statements naming a webhook_ table or webhook_claim, and the writers' INSERT
 * (the outbox's trigger inside), by total time.
 */
export async function statementStats(admin: Client): Promise<StatementFigures[]> {
  const { rows } = await admin.query<{ calls: string; total: number; mean: number; rows: string; query: string }>(`select calls, total_exec_time as total,
      mean_exec_time as mean, rows, query from pg_stat_statements
    where dbid = (select oid from pg_database where datname = current_database())
      and (query ~* 'webhook_(delivery|attempt|event|endpoint|claim)' or query ~* '^\\s*insert into document_version')
      and query !~* 'pg_stat_statements' and query !~* '^\\s*select count\\(\\*\\)::int as (n|total)'
    order by total_exec_time desc limit 12`);
  return rows.map((r) => ({
    label: statementLabel(r.query), calls: Number(r.calls), meanMs: r.mean, totalMs: r.total, rows: Number(r.rows),
    query: r.query.replace(/\s+/g, ' ').slice(0, 90),
  }));
}

export const resetStatements = (admin: Client) => admin.query('select pg_stat_statements_reset()');
