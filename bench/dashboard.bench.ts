import 'reflect-metadata';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { median, withScratchDatabase } from './support';
import { ServerProcess, type Probe } from './server-process';
import { addOtherOrganizations, buildDataset } from './dataset';
import { DEMO_PASSWORD, DEMO_USERS } from '../src/seed/demo-data';

/**
 * The front end's dashboard query over GraphQL (issue 10): the data set of the issue (bench/dataset.ts) in a scratch database, the
 * service of src/app.ts in a child process (production configuration, loopback), and a real bearer token of
 * the architect. For the query without and with the statistics (project `statistics`, template `stats`),
 * ROUNDS rounds of:
 *   - SEQUENTIAL requests one at a time: latency (median, p95), and from the server's probe
 *     (bench/dashboard-server.ts) SQL statements, CPU time and heap bytes allocated per request;
 *   - 16 clients sending LOAD_PER_CLIENT requests each, one after the other: requests answered
 *     per second from the first sent to the last answered, and the server's peak resident set.
 * Each figure is the median of the rounds; the two queries alternate so that a drift in the machine's load
 * falls on both alike.
 *
 * BENCH_OTHER_ORGANIZATIONS=F measures again once F times more rows of other organizations are added (bench/dataset.ts;
 * 100 takes a long while to build). BENCH_ROUNDS (default 3), BENCH_SEQUENTIAL (default 40), BENCH_LOAD_PER_CLIENT (default 3).
 */

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 40);
const OTHER_ORGANIZATIONS = Number(process.env.BENCH_OTHER_ORGANIZATIONS ?? 0);
const LOAD_PER_CLIENT = Number(process.env.BENCH_LOAD_PER_CLIENT ?? 3);
const CLIENTS = 16;

const DASHBOARD = '{ projects(first: 50) { nodes { id name templates { id documents { id contractor { name } versions { version subTotal discount status } } } } } }';
const STATISTICS = 'statistics { answered mayAnswer declined contractors tenderDocuments budgets { total simulatedCost totalAnticipatedTrades '
  + 'totalAnticipatedOffers budgetTradesToAssign { value percent } projectDeviation { value percent } } }';
const TEMPLATE_STATS = 'stats { deltaBudget contractors contractorsAnswers contractorsPending contractorsDeclined contractorsInRevision '
  + 'contractorsIntentionIsNo contractorsIntentionIsMaybe }';
const DASHBOARD_WITH_STATISTICS = `{ projects(first: 50) { nodes { id name ${STATISTICS} templates { id ${TEMPLATE_STATS} `
  + 'documents { id contractor { name } versions { version subTotal discount status } } } } } }';

interface Round {
  medianMs: number;
  p95Ms: number;
  sequential: Probe;
  requestsPerSecond: number;
  loadP50Ms: number;
  load: Probe;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/**
 * CLIENTS clients, each with a connection of its own, sending LOAD_PER_CLIENT requests one after the other;
 * resolves to the time of each answer. Any answer but a 200 fails the run: no speed of errors.
 */
async function closedLoop(url: string, token: string, body: string): Promise<number[]> {
  const times: number[] = [];
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    const own = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let i = 0; i < LOAD_PER_CLIENT; i++) {
        const res = await post(url, token, body, own);
        if (res.status !== 200) throw new Error(`under load: status ${res.status}: ${res.text.slice(0, 300)}`);
        times.push(res.ms);
      }
    } finally {
      own.destroy();
    }
  }));
  return times;
}

function post(url: string, token: string, body: string, via = agent): Promise<{ status: number; text: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/graphql`, {
      method: 'POST', agent: via,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)];
const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;

interface Answer { projects: number; templates: number; documents: number; versions: number; bytes: number }

/** What an answer holds, level by level: the same figures before and after any change. */
function describe(text: string): Answer {
  const body = JSON.parse(text) as { errors?: unknown; data: { projects: { nodes: Array<{ templates: Array<{ documents: Array<{ versions: unknown[] }> }> }> } } };
  if (body.errors) throw new Error(`the dashboard query failed: ${JSON.stringify(body.errors).slice(0, 500)}`);
  const templates = body.data.projects.nodes.flatMap((p) => p.templates);
  const documents = templates.flatMap((t) => t.documents);
  return {
    projects: body.data.projects.nodes.length, templates: templates.length, documents: documents.length,
    versions: documents.reduce((n, d) => n + d.versions.length, 0), bytes: Buffer.byteLength(text),
  };
}

async function measure(server: ServerProcess, token: string, query: string): Promise<Round> {
  const body = JSON.stringify({ query });
  const { result: times, probe: sequential } = await server.probe(async () => {
    const ms: number[] = [];
    for (let i = 0; i < SEQUENTIAL; i++) {
      const res = await post(server.url, token, body);
      if (res.status !== 200) throw new Error(`status ${res.status}: ${res.text.slice(0, 300)}`);
      ms.push(res.ms);
    }
    return ms;
  });
  const loadStarted = performance.now();
  const { result: loadTimes, probe: loadProbe } = await server.probe(() => closedLoop(server.url, token, body));
  return {
    medianMs: median(times),
    p95Ms: percentile(times, 95),
    sequential: { ...sequential, statements: sequential.statements / SEQUENTIAL, cpuMs: sequential.cpuMs / SEQUENTIAL, allocatedBytes: sequential.allocatedBytes / SEQUENTIAL, gcMs: sequential.gcMs / SEQUENTIAL },
    requestsPerSecond: (CLIENTS * LOAD_PER_CLIENT) / ((performance.now() - loadStarted) / 1000),
    loadP50Ms: median(loadTimes),
    load: loadProbe,
  };
}

/** Medians of each figure over the rounds. */
function summary(rounds: Round[]) {
  const m = (f: (r: Round) => number) => median(rounds.map(f));
  return {
    medianMs: m((r) => r.medianMs), p95Ms: m((r) => r.p95Ms), requestsPerSecond: m((r) => r.requestsPerSecond),
    cpuMs: m((r) => r.sequential.cpuMs), allocatedBytes: m((r) => r.sequential.allocatedBytes), statements: m((r) => r.sequential.statements),
    gcMs: m((r) => r.sequential.gcMs), peakRss: m((r) => r.load.peakRss), loadP50Ms: m((r) => r.loadP50Ms),
  };
}

/** ROUNDS rounds of both queries, then the table of their medians. */
async function measureAll(server: ServerProcess, token: string, title: string): Promise<void> {
  const queries = { without: DASHBOARD, with: DASHBOARD_WITH_STATISTICS } as const;
  for (const [label, query] of Object.entries(queries)) {
    const a = describe((await post(server.url, token, JSON.stringify({ query }))).text);
    console.log(`dashboard: ${label} statistics: ${a.projects} projects, ${a.templates} templates, ${a.documents} documents, ${a.versions} versions, ${(a.bytes / 1024).toFixed(0)} KiB`);
  }
  // Warm-up: plans, JIT, caches.
  const started = performance.now();
  while (performance.now() - started < 5000) for (const query of Object.values(queries)) await post(server.url, token, JSON.stringify({ query }));

  const rounds: Record<keyof typeof queries, Round[]> = { without: [], with: [] };
  for (let round = 1; round <= ROUNDS; round++) {
    for (const label of Object.keys(queries) as Array<keyof typeof queries>) {
      const r = await measure(server, token, queries[label]);
      rounds[label].push(r);
      console.log(`dashboard: round ${round} ${label.padEnd(7)} statistics: one at a time median ${r.medianMs.toFixed(1)} ms p95 ${r.p95Ms.toFixed(1)} ms, `
        + `${r.sequential.cpuMs.toFixed(1)} ms CPU, ${mib(r.sequential.allocatedBytes)} allocated, ${r.sequential.statements} statements per request, `
        + `GC pauses ${r.sequential.gcMs.toFixed(0)} ms; ${CLIENTS} clients ${r.requestsPerSecond.toFixed(1)} req/s `
        + `(p50 ${r.loadP50Ms.toFixed(0)} ms), peak RSS ${mib(r.load.peakRss)}`);
    }
  }
  const without = summary(rounds.without);
  const withStats = summary(rounds.with);
  const row = (name: string, f: (s: typeof without) => string, ratio?: (s: typeof without) => number) => {
    const r = ratio ? `${(ratio(withStats) / ratio(without)).toFixed(2)}×` : '';
    console.log(`| ${name} | ${f(without)} | ${f(withStats)} | ${r} |`);
  };
  console.log(`\n${title}: medians of ${ROUNDS} rounds (load average at the end: ${(await import('node:os')).loadavg().map((l) => l.toFixed(1)).join(' ')})`);
  console.log('| measure | without statistics | with statistics | with / without |');
  console.log('|---|---|---|---|');
  row('one request at a time, median', (s) => `${s.medianMs.toFixed(1)} ms`, (s) => s.medianMs);
  row('one request at a time, p95', (s) => `${s.p95Ms.toFixed(1)} ms`, (s) => s.p95Ms);
  row(`${CLIENTS} concurrent clients`, (s) => `${s.requestsPerSecond.toFixed(1)} req/s`, (s) => 1 / s.requestsPerSecond);
  row('CPU per request', (s) => `${s.cpuMs.toFixed(0)} ms`, (s) => s.cpuMs);
  row('GC pauses per request', (s) => `${s.gcMs.toFixed(0)} ms`, (s) => s.gcMs);
  row('bytes allocated per request', (s) => mib(s.allocatedBytes), (s) => s.allocatedBytes);
  row(`peak RSS under ${CLIENTS} clients`, (s) => mib(s.peakRss));
  row('SQL statements per request', (s) => String(s.statements));
}

export async function run(): Promise<void> {
  await withScratchDatabase('dashboard', 4, async (orm, url) => {
    const execute = <T>(sql: string) => orm.em.getConnection().execute(sql) as Promise<T>;
    let started = performance.now();
    const counts = await buildDataset(execute);
    console.log(`dashboard: data set of ${counts.projects} projects, ${counts.templates} templates and slices, ${counts.documents} documents, `
      + `${counts.versions} versions built in ${((performance.now() - started) / 1000).toFixed(1)} s`);

    const server = await ServerProcess.start(url, {
      // 16 clients on 2 shared cores queue for the pool, and statements wait for the CPU, longer than the
      // default bounds, which answer 503: the throughput asked for is that of answered requests.
      DATABASE_ACQUIRE_TIMEOUT_MS: '60000',
      DATABASE_STATEMENT_TIMEOUT_MS: '60000',
      DATABASE_CONNECT_TIMEOUT_MS: '60000',
      GRAPHQL_QUEUE_TIMEOUT_MS: '60000',
      // The operator's setting to compare (unset: the service's default).
      ...(process.env.GRAPHQL_MAX_CONCURRENT_OPERATIONS ? { GRAPHQL_MAX_CONCURRENT_OPERATIONS: process.env.GRAPHQL_MAX_CONCURRENT_OPERATIONS } : {}),
    });
    try {
      const form = new URLSearchParams({ grant_type: 'password', client_id: 'svc-api', username: DEMO_USERS.architect, password: DEMO_PASSWORD, scope: 'svc email profile' });
      const tokenAnswer = await fetch(`${server.url}/auth/token`, { method: 'POST', body: form });
      if (tokenAnswer.status !== 200) throw new Error(`no token: ${tokenAnswer.status} ${await tokenAnswer.text()}`);
      const token = ((await tokenAnswer.json()) as { access_token: string }).access_token;

      await measureAll(server, token, `the data set (${counts.projects} projects)`);
      if (OTHER_ORGANIZATIONS > 0) {
        started = performance.now();
        const others = await addOtherOrganizations(execute, { otherOrganizationsFactor: OTHER_ORGANIZATIONS });
        console.log(`dashboard: added ${others.projects} projects, ${others.templates} templates, ${others.documents} documents, ${others.versions} versions `
          + `of ${OTHER_ORGANIZATIONS} other organizations in ${((performance.now() - started) / 1000).toFixed(1)} s`);
        await measureAll(server, token, `the data set with ${OTHER_ORGANIZATIONS}× more rows of other organizations`);
      }
    } finally {
      await server.stop();
    }
  });
}
