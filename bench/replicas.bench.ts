import 'reflect-metadata';
import { performance } from 'node:perf_hooks';
import { MikroORM } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import { DATA_MODEL, ormConfig } from '../mikro-orm.config';
import { createApp, listen } from '../src/app';
import { loadConfig } from '../src/platform/config';
import { adminQuery, withDatabase } from '../src/platform/database/admin';
import { closeReplicas, openReplicas, primaryRole } from '../src/platform/database/replica-pools';
import { createLogger } from '../src/platform/logger';
import { DEMO_PASSWORD, DEMO_USERS, loadDemoData } from '../src/seed/demo-data';
import { startReplicatedCluster } from '../test/support/replica-cluster';
import { BENCH_PROJECT_IDS_SQL, buildDataset } from './dataset';
import { median } from './support';

/**
 * Read replicas (issue 22): the dashboard data set (bench/dataset.ts) on a primary with a streaming replica of this
 * benchmark's own (the machine's PostgreSQL binaries, `pg_basebackup -R`, no apply delay), and two instances of the
 * service in this process over it: one reading everything from the primary, one with DATABASE_REPLICA_URLS. For
 * the dashboard query and `projectsStatistics` of 1,000 projects, ROUNDS rounds of SEQUENTIAL requests one at a
 * time on each instance in turn: latency (median, p95) and the SQL statements each request sent to the primary's
 * and to the replica's request pool. Rate limits count in memory here (with the PostgreSQL store each request also
 * makes its one upsert on the primary, by design: counters are not read-only work).
 *
 * Both servers share this machine's two cores: the figures say where the statements go and what routing costs a
 * request, not what a replica on its own host adds in capacity. BENCH_ROUNDS (default 3), BENCH_SEQUENTIAL (default 30).
 */

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 30);

const DASHBOARD = '{ projects(first: 50) { nodes { id name statistics { answered contractors budgets { total } } templates { id '
  + 'stats { contractors contractorsAnswers } documents { id contractor { name } versions { version subTotal discount status } } } } } }';
const STATISTICS = 'query($ids: [ID!]!) { projectsStatistics(ids: $ids) { answered contractors budgets { total simulatedCost } } }';

interface Instance {
  label: string;
  url: string;
  token: string;
  /** Statements sent to the primary's and to the replica's request pool since the last take(). */
  take(): { primary: number; replica: number };
  close(): Promise<void>;
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

function counting(orm: MikroORM): () => number {
  let n = 0;
  orm.em.getKnex().on('query', () => void n++);
  return () => {
    const taken = n;
    n = 0;
    return taken;
  };
}

async function startInstance(label: string, primaryUrl: string, replicaUrl: string | null): Promise<Instance> {
  const config = loadConfig({
    NODE_ENV: 'production', AUTH_DEV_PROVIDER: 'true', PORT: '0', DATABASE_URL: primaryUrl, LOG_LEVEL: 'silent',
    RATE_LIMIT_STORE: 'memory', RATE_LIMIT_API_POINTS: '1000000000', RATE_LIMIT_TOKEN_POINTS: '1000',
    DATABASE_STATEMENT_TIMEOUT_MS: '60000', GRAPHQL_QUEUE_TIMEOUT_MS: '60000',
    ...(replicaUrl ? { DATABASE_REPLICA_URLS: replicaUrl } : {}),
  });
  const log = createLogger(config);
  const orm = await MikroORM.init(ormConfig(primaryUrl, {}, config.database, 'startup', primaryRole(config)));
  const replicas = await openReplicas(config, DATA_MODEL, log);
  const app = await createApp({ config, orm, log, database: { url: primaryUrl, directUrl: primaryUrl, sessionSettings: 'startup', replicas } });
  const server = await listen(app, '127.0.0.1', 0);
  config.publicUrl = server.url;
  config.auth.issuer = server.url;
  const form = new URLSearchParams({ grant_type: 'password', client_id: 'svc-api', username: DEMO_USERS.architect, password: DEMO_PASSWORD, scope: 'svc email profile' });
  const answer = await fetch(`${server.url}/auth/token`, { method: 'POST', body: form });
  const token = ((await answer.json()) as { access_token: string }).access_token;
  const onPrimary = counting(orm);
  const onReplica = replicas.length ? counting(replicas[0].orm!) : () => 0;
  return {
    label,
    url: server.url,
    token,
    take: () => ({ primary: onPrimary(), replica: onReplica() }),
    close: async () => {
      await server.close();
      await app.stop();
      await orm.close(true);
      await closeReplicas(replicas);
    },
  };
}

async function graphql(instance: Instance, query: string, variables?: Record<string, unknown>): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${instance.url}/graphql`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${instance.token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { errors?: unknown[] };
  if (res.status !== 200 || body.errors) throw new Error(`${instance.label}: ${res.status} ${JSON.stringify(body.errors)}`);
  return performance.now() - started;
}

export async function run(): Promise<void> {
  const cluster = await startReplicatedCluster('bench', 0);
  const instances: Instance[] = [];
  try {
    await adminQuery(cluster.primaryUrl, 'create database tender');
    const primaryUrl = withDatabase(cluster.primaryUrl, 'tender');
    const replicaUrl = withDatabase(cluster.replicaUrl, 'tender');
    const setup = await MikroORM.init(ormConfig(primaryUrl));
    try {
      await setup.getMigrator().up();
      await loadDemoData(setup.em.fork());
      const started = performance.now();
      const counts = await buildDataset(<T>(sql: string) => setup.em.getConnection().execute(sql) as Promise<T>);
      console.log(`replicas: data set of ${counts.projects} projects, ${counts.documents} documents, ${counts.versions} versions in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    } finally {
      await setup.close(true);
    }
    // The replica has it all before anything is measured.
    const primary = new Client({ connectionString: primaryUrl });
    const replica = new Client({ connectionString: replicaUrl });
    await primary.connect();
    await replica.connect();
    const [{ lsn }] = (await primary.query<{ lsn: string }>('select pg_current_wal_insert_lsn()::text as lsn')).rows;
    for (;;) {
      const { rows } = await replica.query<{ done: boolean }>('select pg_last_wal_replay_lsn() >= $1::pg_lsn as done', [lsn]);
      if (rows[0].done) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const ids = (await primary.query<{ id: string }>(BENCH_PROJECT_IDS_SQL)).rows.map((r) => r.id).slice(0, 1000);
    await primary.end();
    await replica.end();

    instances.push(await startInstance('primary only', primaryUrl, null));
    instances.push(await startInstance('replica', primaryUrl, replicaUrl));
    // The sign-ins wrote: past the read-your-writes window, the architect's reads may go to the replica.
    await new Promise((r) => setTimeout(r, 6000));

    const workloads: Array<[string, () => [string, Record<string, unknown> | undefined]]> = [
      ['dashboard (50 projects)', () => [DASHBOARD, undefined]],
      [`projectsStatistics(${ids.length} ids)`, () => [STATISTICS, { ids }]],
    ];
    for (const [name, operation] of workloads) {
      const times = new Map<string, number[]>(instances.map((i) => [i.label, []]));
      const statements = new Map<string, { primary: number[]; replica: number[] }>(instances.map((i) => [i.label, { primary: [], replica: [] }]));
      for (const instance of instances) await graphql(instance, ...operation()); // warm-up: caller kept, documents compiled
      for (let round = 0; round < ROUNDS; round++) {
        for (const instance of instances) {
          instance.take();
          for (let i = 0; i < SEQUENTIAL; i++) {
            times.get(instance.label)!.push(await graphql(instance, ...operation()));
            const taken = instance.take();
            statements.get(instance.label)!.primary.push(taken.primary);
            statements.get(instance.label)!.replica.push(taken.replica);
          }
        }
      }
      for (const instance of instances) {
        const xs = times.get(instance.label)!;
        const s = statements.get(instance.label)!;
        console.log(`replicas: ${name.padEnd(28)} ${instance.label.padEnd(13)} median ${median(xs).toFixed(1).padStart(6)} ms  p95 ${pct(xs, 95).toFixed(1).padStart(6)} ms  `
          + `statements per request: primary ${median(s.primary)}, replica ${median(s.replica)} (max on the primary ${Math.max(...s.primary)}; n=${xs.length})`);
      }
    }
  } finally {
    for (const instance of instances) await instance.close();
    await cluster.stop();
  }
}
