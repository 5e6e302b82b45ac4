import 'reflect-metadata';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { print } from 'graphql';
import { DashboardDocument } from '../examples/graphql/generated/graphql';
import { DEMO_PASSWORD, DEMO_USERS } from '../src/seed/demo-data';
import { buildDataset } from './dataset';
import { ServerProcess } from './server-process';
import { median, withScratchDatabase } from './support';
import { inSpan } from '../src/platform/telemetry/tracing';

/**
 * What tracing costs (issue 27, docs/tracing.md): the front end's dashboard query (examples/graphql, `first: 50`) on
 * the data set of bench/dataset.ts, against three servers of the same build in processes of their own (production
 * configuration), started together: tracing off; on with 10 % of traces sampled (`parentbased_traceidratio`, 0.1);
 * on with every trace sampled. Both exports go over OTLP/HTTP (protobuf, the SDK's default) to a collector in this
 * process that answers at once. ROUNDS rounds, the three servers in turn (each round starting with the next), SEQUENTIAL requests one at a time each:
 * latency (median, p95) and the server's CPU time per request (its own probe, bench/dashboard-server.ts).
 *
 * BENCH_ROUNDS (default 6), BENCH_SEQUENTIAL (default 40).
 */

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 40);
const BODY = JSON.stringify({ query: print(DashboardDocument), variables: { first: 50 } });
const WAITS = { DATABASE_ACQUIRE_TIMEOUT_MS: '60000', DATABASE_STATEMENT_TIMEOUT_MS: '60000', GRAPHQL_QUEUE_TIMEOUT_MS: '60000' };

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function post(url: string, token: string): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/graphql`, {
      method: 'POST', agent,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(BODY) },
    }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, ms: performance.now() - started }));
    });
    req.on('error', reject);
    req.end(BODY);
  });
}

async function tokenOf(url: string): Promise<string> {
  const form = new URLSearchParams({ grant_type: 'password', client_id: 'svc-api', username: DEMO_USERS.architect, password: DEMO_PASSWORD, scope: 'svc email profile' });
  const answer = await fetch(`${url}/auth/token`, { method: 'POST', body: form });
  if (answer.status !== 200) throw new Error(`no token: ${answer.status}`);
  return ((await answer.json()) as { access_token: string }).access_token;
}

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)];

/**
 * Tracing off: what our span helpers cost through the API's no-op tracer (this process never starts the SDK), per
 * call; a dashboard request makes about six of them (the operation, its batches, the rate limit).
 */
async function noopCost(): Promise<number> {
  const calls = 200_000;
  const work = () => Promise.resolve(1);
  for (let i = 0; i < 10_000; i++) await inSpan('warm-up', {}, work);
  const started = performance.now();
  for (let i = 0; i < calls; i++) await inSpan('dataloader templates', { 'dataloader.keys': 50 }, work);
  const withSpans = performance.now() - started;
  const bare = performance.now();
  for (let i = 0; i < calls; i++) await work();
  return ((withSpans - (performance.now() - bare)) / calls) * 1e6;
}

export async function run(): Promise<void> {
  const ns = await noopCost();
  console.log(`tracing: off, a span helper through the no-op tracer costs ${ns.toFixed(0)} ns per call over a bare await`);
  // The collector: counts export requests and their bytes, answers 200 at once.
  let exports = 0;
  let exportedBytes = 0;
  const collector = http.createServer((req, res) => {
    req.on('data', (c: Buffer) => { exportedBytes += c.length; });
    req.on('end', () => {
      exports++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;

  await withScratchDatabase('tracing', 6, async (orm, url) => {
    const execute = <T>(sql: string) => orm.em.getConnection().execute(sql) as Promise<T>;
    const counts = await buildDataset(execute);
    console.log(`tracing: data set of ${counts.projects} projects, ${counts.versions} versions`);
    const traced = (ratio: string) => ({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: ratio });
    const modes = { off: {}, '10 %': traced('0.1'), '100 %': traced('1') } as const;
    const servers = new Map<string, { server: ServerProcess; token: string }>();
    try {
      for (const [mode, env] of Object.entries(modes)) {
        const server = await ServerProcess.start(url, { ...WAITS, ...env });
        servers.set(mode, { server, token: await tokenOf(server.url) });
      }
      // Warm-up: plans, JIT, the exporters' connections.
      for (const { server, token } of servers.values()) {
        const started = performance.now();
        while (performance.now() - started < 4000) await post(server.url, token);
      }
      const results = new Map<string, Array<{ median: number; p95: number; cpu: number }>>([...servers.keys()].map((m) => [m, []]));
      const order = [...servers.entries()];
      for (let round = 1; round <= ROUNDS; round++) {
        // Each round starts with the next server: no mode always goes first (after the others' GC, say).
        for (const [mode, { server, token }] of [...order.slice((round - 1) % order.length), ...order.slice(0, (round - 1) % order.length)]) {
          const { result: times, probe } = await server.probe(async () => {
            const ms: number[] = [];
            for (let i = 0; i < SEQUENTIAL; i++) {
              const res = await post(server.url, token);
              if (res.status !== 200) throw new Error(`${mode}: status ${res.status}`);
              ms.push(res.ms);
            }
            return ms;
          });
          const r = { median: median(times), p95: percentile(times, 95), cpu: probe.cpuMs / SEQUENTIAL };
          results.get(mode)!.push(r);
          console.log(`tracing: round ${round} ${mode.padEnd(5)}: median ${r.median.toFixed(1)} ms, p95 ${r.p95.toFixed(1)} ms, ${r.cpu.toFixed(2)} ms CPU per request`);
        }
      }
      const off = results.get('off')!;
      const offCpu = median(off.map((r) => r.cpu));
      const offMedian = median(off.map((r) => r.median));
      console.log(`\ntracing: medians of ${ROUNDS} rounds of ${SEQUENTIAL} dashboard requests (load average at the end: ${loadavg().map((l) => l.toFixed(1)).join(' ')}); `
        + `${exports} OTLP exports received, ${(exportedBytes / 1024).toFixed(0)} KiB`);
      console.log('| tracing | latency median | p95 | CPU per request | CPU vs off | latency vs off |');
      console.log('|---|---|---|---|---|---|');
      for (const [mode, rs] of results) {
        const m = (f: (r: { median: number; p95: number; cpu: number }) => number) => median(rs.map(f));
        const pct = (a: number, b: number) => `${a >= b ? '+' : ''}${(((a - b) / b) * 100).toFixed(1)} %`;
        console.log(`| ${mode} | ${m((r) => r.median).toFixed(1)} ms | ${m((r) => r.p95).toFixed(1)} ms | ${m((r) => r.cpu).toFixed(2)} ms | `
          + `${mode === 'off' ? '' : pct(m((r) => r.cpu), offCpu)} | ${mode === 'off' ? '' : pct(m((r) => r.median), offMedian)} |`);
      }
    } finally {
      for (const { server } of servers.values()) await server.stop();
      collector.closeAllConnections();
      collector.close();
    }
  });
}
