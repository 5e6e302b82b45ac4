import 'reflect-metadata';
import http from 'node:http';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { print } from 'graphql';
import { median, withScratchDatabase } from './support';
import { ServerProcess, type Probe, type RecordedStatement } from './server-process';
import { addOtherOrganizations, buildDataset } from './dataset';
import { DEMO_ARCHITECT_CALLER, DEMO_PASSWORD, DEMO_USERS } from '../src/seed/demo-data';
import { DashboardDocument } from '../examples/graphql/generated/graphql';

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
 * Before them (first, so that a failed check fails at once), the front end's own dashboard (examples/graphql/dashboard.graphql and its fragments, the generated
 * DashboardDocument printed, variables `{ first: 50 }`) against its same-SQL floor (issue 34): the service records the
 * SQL statements of one request (bench/dashboard-server.ts, `record`), which are handed to the floor
 * (bench/dashboard-floor-server.ts: node:http, a pg pool, plain loops) in a process of its own; the floor must answer
 * the very bytes the service answered, and send the same statements (the same texts, as many), or the benchmark fails.
 * Then ROUNDS runs of each, interleaved (service, floor, service, floor, ...), each run: SEQUENTIAL requests one at
 * a time (latency median and p95), then CLIENTS clients sending LOAD_PER_CLIENT each (requests per second); over both,
 * per request, the server's CPU time, GC pauses, bytes allocated and SQL statements (the probe's figures over the run
 * divided by its requests), and the peak resident set under the clients. Every answer of the runs is compared with the
 * service's first. Medians of the runs, with the ratios service / floor.
 *
 * BENCH_OTHER_ORGANIZATIONS=F measures again once F times more rows of other organizations are added (bench/dataset.ts;
 * 100 takes a long while to build). BENCH_ROUNDS (default 3), BENCH_SEQUENTIAL (default 40), BENCH_LOAD_PER_CLIENT (default 3).
 * BENCH_FLOOR=0 leaves the floor out (the two queries only).
 * After the runs, BENCH_PROFILE (default 40, 0: none) more requests of the dashboard one at a time under V8's CPU
 * profiler in the service: the sampled time per request, and the part of it in MikroORM's functions, and under them (and
 * knex's, pg's, graphql's: bench/probe.ts), which the runs' figures do not separate. BENCH_PROFILE_FILE=path writes that profile (a .cpuprofile).
 */

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 40);
const OTHER_ORGANIZATIONS = Number(process.env.BENCH_OTHER_ORGANIZATIONS ?? 0);
const LOAD_PER_CLIENT = Number(process.env.BENCH_LOAD_PER_CLIENT ?? 3);
const CLIENTS = 16;
const FLOOR = process.env.BENCH_FLOOR !== '0';
const PROFILE = Number(process.env.BENCH_PROFILE ?? 40);

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
async function closedLoop(url: string, token: string, body: string, check: (text: string) => void = () => undefined): Promise<number[]> {
  const times: number[] = [];
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    const own = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let i = 0; i < LOAD_PER_CLIENT; i++) {
        const res = await post(url, token, body, own);
        if (res.status !== 200) throw new Error(`under load: status ${res.status}: ${res.text.slice(0, 300)}`);
        check(res.text);
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

/** The first byte where `actual` differs from `expected`, with some context of each: thrown, failing the benchmark. */
function assertSameBytes(expected: string, actual: string, what: string): void {
  if (actual === expected) return;
  const a = Buffer.from(expected);
  const b = Buffer.from(actual);
  let at = 0;
  while (at < a.length && at < b.length && a[at] === b[at]) at++;
  const context = (buf: Buffer) => JSON.stringify(buf.subarray(Math.max(0, at - 120), at + 120).toString('utf8'));
  throw new Error(`${what}: not the service's bytes (${b.length} bytes against ${a.length}); first difference at byte ${at}:\n`
    + `  service: ${context(a)}\n  ${what}: ${context(b)}`);
}

/** A statement's text in one line, values cut short: for the list the benchmark prints. */
const abbreviated = (sql: string) => sql.trim().replace(/\s+/g, ' ')
  .replace(/'\{[0-9a-f,-]{80,}\}'/g, (m) => `'{${m.split(',').length} ids}'`)
  .replace(/\('[0-9a-f-]{36}'(?:, '[0-9a-f-]{36}'){4,}\)/g, (m) => `(${m.split(',').length} ids)`)
  .replace(/^(select )(.{70,}?)( from )/, (_m, s: string, columns: string, f: string) => `${s}${columns.slice(0, 60)}…${f}`);

interface FloorRun {
  medianMs: number;
  p95Ms: number;
  requestsPerSecond: number;
  /** Per request, over the run (one at a time and under the clients): the probe's figures divided by the requests. */
  cpuMs: number;
  gcMs: number;
  gcs: number;
  allocatedBytes: number;
  statements: number;
  peakRss: number;
}

/** One run against `server`: SEQUENTIAL requests one at a time, then CLIENTS clients; every answer must be `reference`. */
async function floorRun(server: ServerProcess, token: string, body: string, reference: string, what: string): Promise<FloorRun> {
  const check = (text: string) => assertSameBytes(reference, text, what);
  const { result: times, probe: one } = await server.probe(async () => {
    const ms: number[] = [];
    for (let i = 0; i < SEQUENTIAL; i++) {
      const res = await post(server.url, token, body);
      if (res.status !== 200) throw new Error(`${what}: status ${res.status}: ${res.text.slice(0, 300)}`);
      check(res.text);
      ms.push(res.ms);
    }
    return ms;
  });
  const loadStarted = performance.now();
  const { probe: load } = await server.probe(() => closedLoop(server.url, token, body, check));
  const loadSeconds = (performance.now() - loadStarted) / 1000;
  const requests = SEQUENTIAL + CLIENTS * LOAD_PER_CLIENT;
  const perRequest = (f: (p: Probe) => number) => (f(one) + f(load)) / requests;
  return {
    medianMs: median(times), p95Ms: percentile(times, 95), requestsPerSecond: (CLIENTS * LOAD_PER_CLIENT) / loadSeconds,
    cpuMs: perRequest((p) => p.cpuMs), gcMs: perRequest((p) => p.gcMs), gcs: perRequest((p) => p.gcs),
    allocatedBytes: perRequest((p) => p.allocatedBytes), statements: perRequest((p) => p.statements), peakRss: load.peakRss,
  };
}

/**
 * The front end's dashboard on the service against its same-SQL floor (issue 34): capture, hand over, byte check,
 * then ROUNDS interleaved runs of each and the table of their medians.
 */
async function measureAgainstFloor(service: ServerProcess, floor: ServerProcess, token: string, title: string): Promise<void> {
  const document = print(DashboardDocument);
  const variables = { first: 50 };
  const body = JSON.stringify({ query: document, variables });
  // The document's first requests run on graphql-js, its compiled query from the second on: captured once warm.
  for (let i = 0; i < 3; i++) await post(service.url, token, body);
  const { result: first, statements: captured } = await service.record(() => post(service.url, token, body));
  if (first.status !== 200) throw new Error(`the service's dashboard: status ${first.status}: ${first.text.slice(0, 300)}`);
  const reference = first.text;
  const answer = JSON.parse(reference) as { errors?: unknown; data: { projects: { nodes: Array<{ templates: Array<{ documents: Array<{ versions: unknown[] }> }> }> } }; extensions: { cost: { requested: number; actual: number; limit: number } } };
  if (answer.errors) throw new Error(`the service's dashboard failed: ${JSON.stringify(answer.errors).slice(0, 500)}`);
  const templates = answer.data.projects.nodes.flatMap((p) => p.templates);
  const documents = templates.flatMap((t) => t.documents);
  console.log(`dashboard floor: the front end's document, ${answer.data.projects.nodes.length} projects, ${templates.length} templates and slices, `
    + `${documents.length} documents, ${documents.reduce((n, d) => n + d.versions.length, 0)} versions, ${Buffer.byteLength(reference).toLocaleString('en')} bytes, `
    + `cost ${JSON.stringify(answer.extensions.cost)}`);

  const { cost } = answer.extensions;
  const configured = await floor.command<{ error: string | null }>({
    cmd: 'configure', document, variables, caller: DEMO_ARCHITECT_CALLER, statements: captured, cost: { requested: cost.requested, limit: cost.limit },
  }, 'configured');
  if (!configured || configured.error) throw new Error(`the floor refused the service's statements: ${configured?.error ?? 'it exited'}`);
  // Recorded as the service's was, warm (its pool's connections made).
  for (let i = 0; i < 4; i++) {
    const res = await post(floor.url, token, body);
    if (res.status !== 200) throw new Error(`the floor's dashboard: status ${res.status}: ${res.text.slice(0, 300)}`);
    assertSameBytes(reference, res.text, 'the floor');
  }
  const { result: floorAnswer, statements: floorStatements } = await floor.record(() => post(floor.url, token, body));
  assertSameBytes(reference, floorAnswer.text, 'the floor');
  // The same statements: as many, the same texts (the values in them computed by the floor from the rows before).
  const texts = (list: RecordedStatement[]) => list.map((s) => s.sql).sort();
  const [ours, theirs] = [texts(captured), texts(floorStatements)];
  if (ours.length !== theirs.length || ours.some((sql, i) => sql !== theirs[i])) {
    throw new Error(`the floor sent other statements than the service: ${theirs.length} against ${ours.length}; `
      + `first differing: ${abbreviated(theirs.find((sql, i) => sql !== ours[i]) ?? '')}`);
  }
  console.log(`dashboard floor: the same ${Buffer.byteLength(reference).toLocaleString('en')} bytes, the same ${captured.length} statements; `
    + 'the service\'s (sent → answered, ms from the recording\'s start; rows; connection) beside the floor\'s:');
  const floorOf = new Map(floorStatements.map((s) => [s.sql, s]));
  captured.forEach((s, i) => {
    const f = floorOf.get(s.sql)!;
    const at = (r: RecordedStatement) => `${r.sentMs.toFixed(1)} → ${r.answeredMs?.toFixed(1) ?? '?'}`;
    console.log(`  ${String(i + 1).padStart(2)}. [${s.role} ${s.connection}${s.transaction ? ` ${s.transaction}` : ''}] service ${at(s)}, floor ${at(f)}, `
      + `${s.rows ?? '?'} rows: ${abbreviated(s.sql).slice(0, 150)}`);
  });

  // Warm-up of both, alternating: the service's compiled query and plans, the floor's pool.
  const started = performance.now();
  while (performance.now() - started < 5000) {
    assertSameBytes(reference, (await post(service.url, token, body)).text, 'the service');
    assertSameBytes(reference, (await post(floor.url, token, body)).text, 'the floor');
  }

  const runs: Record<'service' | 'floor', FloorRun[]> = { service: [], floor: [] };
  const loads: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [label, server] of [['service', service], ['floor', floor]] as const) {
      loads.push(loadavg()[0]);
      const r = await floorRun(server, token, body, reference, `the ${label}`);
      runs[label].push(r);
      console.log(`dashboard floor: run ${round} ${label.padEnd(7)}: one at a time median ${r.medianMs.toFixed(1)} ms p95 ${r.p95Ms.toFixed(1)} ms; `
        + `${CLIENTS} clients ${r.requestsPerSecond.toFixed(1)} req/s; per request ${r.cpuMs.toFixed(1)} ms CPU, ${mib(r.allocatedBytes)} allocated, `
        + `GC ${r.gcMs.toFixed(1)} ms (${r.gcs.toFixed(2)}), ${r.statements.toFixed(2)} statements; peak RSS ${mib(r.peakRss)}`);
    }
  }
  loads.push(loadavg()[0]);
  if (PROFILE > 0) {
    const { profile } = await service.profile(async () => {
      for (let i = 0; i < PROFILE; i++) assertSameBytes(reference, (await post(service.url, token, body)).text, 'the service');
    });
    const per = (ms: number) => `${(ms / PROFILE).toFixed(1)} ms`;
    console.log(`dashboard floor: CPU profile of the service, ${PROFILE} requests one at a time, sampled per request: ${per(profile.totalMs)}; `
      + `own time of ${Object.entries(profile.selfMs).map(([name, ms]) => `${name} ${per(ms)}`).join(', ')}; `
      + `under ${Object.entries(profile.packagesMs).map(([name, ms]) => `${name} ${per(ms)}`).join(', ')}`);
  }
  const m = (label: 'service' | 'floor', f: (r: FloorRun) => number) => median(runs[label].map(f));
  const statements = Math.round(m('service', (r) => r.statements));
  if (statements !== captured.length) {
    throw new Error(`the service sent ${m('service', (r) => r.statements).toFixed(2)} statements per request over the runs, ${captured.length} in the request recorded`);
  }
  const row = (name: string, f: (r: FloorRun) => number, format: (n: number) => string, ratio = true) => {
    const [a, b] = [m('service', f), m('floor', f)];
    console.log(`| ${name} | ${format(a)} | ${format(b)} | ${ratio ? `${(a / b).toFixed(2)}×` : ''} |`);
  };
  console.log(`\n${title}: the front end's dashboard, service against its same-SQL floor, medians of ${ROUNDS} interleaved runs `
    + `(load average at the runs' starts: ${loads.map((l) => l.toFixed(1)).join(' ')})`);
  console.log('| measure | service | floor | service / floor |');
  console.log('|---|---|---|---|');
  row('one request at a time, median', (r) => r.medianMs, (n) => `${n.toFixed(1)} ms`);
  row('one request at a time, p95', (r) => r.p95Ms, (n) => `${n.toFixed(1)} ms`);
  row(`${CLIENTS} concurrent clients`, (r) => r.requestsPerSecond, (n) => `${n.toFixed(1)} req/s`);
  row('server CPU per request', (r) => r.cpuMs, (n) => `${n.toFixed(1)} ms`);
  row('GC pauses per request', (r) => r.gcMs, (n) => `${n.toFixed(1)} ms`);
  row('collections per request', (r) => r.gcs, (n) => n.toFixed(2));
  row('bytes allocated per request', (r) => r.allocatedBytes, mib);
  row('SQL statements per request', (r) => r.statements, (n) => n.toFixed(2), false);
  row(`peak RSS under ${CLIENTS} clients`, (r) => r.peakRss, mib);
}

export async function run(): Promise<void> {
  await withScratchDatabase('dashboard', 4, async (orm, url) => {
    const execute = <T>(sql: string) => orm.em.getConnection().execute(sql) as Promise<T>;
    let started = performance.now();
    const counts = await buildDataset(execute);
    console.log(`dashboard: data set of ${counts.projects} projects, ${counts.templates} templates and slices, ${counts.documents} documents, `
      + `${counts.versions} versions built in ${((performance.now() - started) / 1000).toFixed(1)} s`);

    const env = {
      // 16 clients on 2 shared cores queue for the pool, and statements wait for the CPU, longer than the
      // default bounds, which answer 503: the throughput asked for is that of answered requests.
      DATABASE_ACQUIRE_TIMEOUT_MS: '60000',
      DATABASE_STATEMENT_TIMEOUT_MS: '60000',
      DATABASE_CONNECT_TIMEOUT_MS: '60000',
      GRAPHQL_QUEUE_TIMEOUT_MS: '60000',
      // The operator's setting to compare (unset: the service's default).
      ...(process.env.GRAPHQL_MAX_CONCURRENT_OPERATIONS ? { GRAPHQL_MAX_CONCURRENT_OPERATIONS: process.env.GRAPHQL_MAX_CONCURRENT_OPERATIONS } : {}),
    };
    const server = await ServerProcess.start(url, env);
    // The floor reads the same configuration (its pool's size and settings), in a process of its own.
    const floor = FLOOR ? await ServerProcess.start(url, env, 'dashboard-floor-server.js') : null;
    try {
      const form = new URLSearchParams({ grant_type: 'password', client_id: 'svc-api', username: DEMO_USERS.architect, password: DEMO_PASSWORD, scope: 'svc email profile' });
      const tokenAnswer = await fetch(`${server.url}/auth/token`, { method: 'POST', body: form });
      if (tokenAnswer.status !== 200) throw new Error(`no token: ${tokenAnswer.status} ${await tokenAnswer.text()}`);
      const token = ((await tokenAnswer.json()) as { access_token: string }).access_token;

      if (floor) await measureAgainstFloor(server, floor, token, `the data set (${counts.projects} projects)`);
      await measureAll(server, token, `the data set (${counts.projects} projects)`);
      if (OTHER_ORGANIZATIONS > 0) {
        started = performance.now();
        const others = await addOtherOrganizations(execute, { otherOrganizationsFactor: OTHER_ORGANIZATIONS });
        console.log(`dashboard: added ${others.projects} projects, ${others.templates} templates, ${others.documents} documents, ${others.versions} versions `
          + `of ${OTHER_ORGANIZATIONS} other organizations in ${((performance.now() - started) / 1000).toFixed(1)} s`);
        const title = `the data set with ${OTHER_ORGANIZATIONS}× more rows of other organizations`;
        if (floor) await measureAgainstFloor(server, floor, token, title);
        await measureAll(server, token, title);
      }
    } finally {
      await Promise.all([server.stop(), floor?.stop()]);
    }
  });
}
