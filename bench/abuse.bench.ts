import 'reflect-metadata';
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Kind, Lexer, Source, TokenKind, parse, print, visit, type FragmentDefinitionNode } from 'graphql';
import { DEMO_USERS } from '../src/seed/demo-data';
import { buildDataset } from './dataset';
import { hasErrors, post, type FairnessJob, type FairnessResult, type FloodJob, type FloodResult } from './abuse-clients';
import { ServerProcess, type Exit, type Rss } from './server-process';
import { demoToken, median, withScratchDatabase } from './support';

/**
 * A hostile caller holding valid tokens (issue 31), against the service in a process of its own (production mode,
 * the limits of bench/server-process.ts: only the API's request quota is lifted) over the 1,005-project data set.
 * The load comes from another process (bench/abuse-clients.ts); a fresh server serves each scenario.
 *
 * 1. memory-comments: BENCH_ABUSE_COMMENTS (5,000) POSTs of `{ me { id } } # <comment>`, a different random
 *    printable comment of BENCH_ABUSE_COMMENT_BYTES (1,000,000) each time, BENCH_ABUSE_CONCURRENCY (8) at a time.
 * 2. memory-costliest: BENCH_ABUSE_COPIES (2,000) distinct copies (alias suffix) of the costliest accepted document
 *    with every root field under `@skip(if: $s)`, `{ s: true }`: nothing runs. memory-costliest-padded: the same
 *    document padded to ~1 MB with long alias names (when the one chosen is not already).
 * 3. fairness: caller A, BENCH_ABUSE_CLIENTS_A (200) closed-loop clients resending the costliest accepted document
 *    (it runs), against caller B, BENCH_ABUSE_CLIENTS_B (2) clients alternating `{ __typename }` and `{ me { id } }`,
 *    for BENCH_SECONDS (20).
 *
 * Memory: the server's resident set before, after and at its peak (its own 10 ms sampler, over IPC), and whether it
 * survived (exit code or signal and its last stderr lines when it did not). Every wait is bounded: a request by
 * BENCH_ABUSE_REQUEST_TIMEOUT_MS (60 s), a memory scenario by BENCH_ABUSE_MAX_SECONDS (600).
 *
 * The costliest accepted document is asked of the server, so that the benchmark follows its limits: a family of
 * documents (up to 15 aliases of `projects(first: F) { nodes { ... } }` over four field sets of the dashboard's
 * fragments, F from "absent" to 500, and variants padded with long alias names to ~1 MB) is first sent with every
 * root under `@skip` (validated, not run), then the accepted ones run: the slowest answer that is a 200 without
 * errors within BENCH_ABUSE_CANDIDATE_MAX_MS (5 s) wins, by the median of 3 runs. BENCH_ABUSE_SELECTION_SECONDS (60)
 * bounds the selection.
 */

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const COMMENTS = env('BENCH_ABUSE_COMMENTS', 5000);
const COMMENT_BYTES = env('BENCH_ABUSE_COMMENT_BYTES', 1_000_000);
const COPIES = env('BENCH_ABUSE_COPIES', 2000);
const CONCURRENCY = env('BENCH_ABUSE_CONCURRENCY', 8);
const SECONDS = env('BENCH_SECONDS', 20);
const CLIENTS_A = env('BENCH_ABUSE_CLIENTS_A', 200);
const CLIENTS_B = env('BENCH_ABUSE_CLIENTS_B', 2);
const REQUEST_TIMEOUT_MS = env('BENCH_ABUSE_REQUEST_TIMEOUT_MS', 60_000);
const MAX_SECONDS = env('BENCH_ABUSE_MAX_SECONDS', 600);
const CANDIDATE_MAX_MS = env('BENCH_ABUSE_CANDIDATE_MAX_MS', 5000);
const SELECTION_SECONDS = env('BENCH_ABUSE_SELECTION_SECONDS', 60);
const SCENARIOS = (process.env.BENCH_ABUSE_SCENARIOS ?? 'memory-comments,memory-costliest,memory-costliest-padded,fairness,refusal').split(',').map((s) => s.trim());
/** Bytes a padded document is brought to (the body limit is 1 MiB of JSON). */
const PADDED_BYTES = 1_000_000;

const MiB = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const ms = (value: number) => `${value.toFixed(0)} ms`;
const counts = (byStatus: Record<string, number>) => Object.entries(byStatus).sort(([a], [b]) => a.localeCompare(b)).map(([s, n]) => `${s} x ${n}`).join(', ') || 'none';
const log = (line: string) => console.log(`abuse: ${line}`);

// ---------------------------------------------------------------------------------------------------------------
// The costliest accepted document

/** What a project of the family selects, from the dashboard's fragments (examples/graphql/fragments.graphql). */
const FIELD_SETS = {
  full: '...ProjectFields',
  dashboard: 'id name statistics { ...ProjectStatisticsFields } managers { ...UserFields } trades { ...TradeFields } '
    + 'templates { id stats { ...TemplateStatsFields } documents { id contractor { id name } versions { id version status subTotal discount } } }',
  templates: 'id templates { ...TemplateFields }',
  statistics: 'id statistics { ...ProjectStatisticsFields }',
} as const;
type FieldSet = keyof typeof FIELD_SETS;
const ALIASES = [1, 2, 4, 8, 15];
/** Page sizes, `null` for none (today: every project); literal ones from the largest the schema allows down. */
const FIRSTS = [500, 200, 100, 50, 20, 10, 5, 2, 1];

interface Shape { set: FieldSet; aliases: number; first: number | null; padded: boolean }

const describeShape = (s: Shape) => `${s.aliases} x projects${s.first === null ? '' : `(first: ${s.first})`} { nodes { <${s.set}> } }${s.padded ? ', long aliases' : ''}`;

let fragments: Map<string, FragmentDefinitionNode> | null = null;

/** The fragments `selection` spreads, and those they spread, printed. */
function fragmentsOf(selection: string): string {
  fragments ??= new Map(parse(readFileSync(path.resolve('examples/graphql/fragments.graphql'), 'utf8')).definitions
    .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
    .map((d) => [d.name.value, d]));
  const needed = new Set<string>();
  const queue = [...selection.matchAll(/\.\.\.(\w+)/g)].map((m) => m[1]);
  while (queue.length) {
    const name = queue.pop()!;
    if (needed.has(name)) continue;
    const definition = fragments.get(name);
    if (!definition) throw new Error(`examples/graphql/fragments.graphql has no fragment ${name}`);
    needed.add(name);
    visit(definition, { FragmentSpread(node) { queue.push(node.name.value); } });
  }
  return [...needed].map((name) => print(fragments!.get(name)!)).join('\n\n');
}

/**
 * The document of a shape. `skip`: every root field under `@skip(if: $s)` (send `{ s: true }`); `suffix`: appended
 * to every alias (distinct copies; `{{N}}` for the load generator to number them).
 */
function costlyDocument(shape: Shape, options: { skip?: boolean; suffix?: string } = {}): string {
  const selection = FIELD_SETS[shape.set];
  const tail = `\n\n${fragmentsOf(selection)}\n`;
  const root = (alias: string) => `  ${alias}: projects${shape.first === null ? '' : `(first: ${shape.first})`}${options.skip ? ' @skip(if: $s)' : ''} { nodes { ${selection} } }`;
  const head = `query Abuse${options.skip ? '($s: Boolean!)' : ''} {\n`;
  const plain = Array.from({ length: shape.aliases }, (_, i) => root(`a${i}${options.suffix ?? ''}`));
  let padding = 0;
  if (shape.padded) {
    const bytes = head.length + plain.join('\n').length + 3 + tail.length;
    padding = Math.max(0, Math.floor((PADDED_BYTES - bytes) / shape.aliases) - 1);
  }
  const roots = Array.from({ length: shape.aliases }, (_, i) => root(`a${i}${padding ? `_${'x'.repeat(padding)}` : ''}${options.suffix ?? ''}`));
  return `${head}${roots.join('\n')}\n}${tail}`;
}

/** Tokens as graphql-js's parser counts them against `maxTokens` (comments not included). */
function tokens(document: string): number {
  const lexer = new Lexer(new Source(document));
  let n = 0;
  while (lexer.advance().kind !== TokenKind.EOF) n++;
  return n;
}

interface Candidate {
  shape: Shape;
  document: string;
  bytes: number;
  tokens: number;
  /** Latencies of its runs (200 without errors); empty while not run. */
  runs: number[];
  answerBytes: number;
  note?: string;
}

/** Sends `query` once; 'accepted' is a 200 without errors. */
async function ask(url: string, token: string, query: string, variables?: Record<string, unknown>) {
  const answer = await post(url, token, JSON.stringify({ query, variables }), false, REQUEST_TIMEOUT_MS);
  const accepted = answer.status === 200 && !hasErrors(answer);
  const why = accepted ? '' : answer.status === 0 ? `no answer: ${answer.error}` : `${answer.status} ${/"message":"((?:[^"\\]|\\.)*)"/.exec(answer.head)?.[1] ?? answer.head.slice(0, 120)}`;
  return { answer, accepted, why };
}

/**
 * Finds the costliest accepted document (see the file's comment). Validation first (every root skipped, nothing
 * runs): per field set and alias count, the page sizes from the largest down to the first accepted, and no page
 * size. Then the accepted run, each field set's alias counts in increasing order, one run each; an alias count
 * whose predicted time (the last one's, scaled) is beyond the cap is not tried. Then padded variants (validated; the
 * one with room under the cap also run); then the slowest by its median runs again, until the slowest has 3 runs.
 */
async function selectCostliest(server: ServerProcess, token: string, fatal: Set<string>): Promise<Candidate | null> {
  const started = performance.now();
  const elapsed = () => (performance.now() - started) / 1000;
  const say = (line: string) => log(`costliest: ${line}`);
  const candidate = (shape: Shape): Candidate => {
    const document = costlyDocument(shape);
    return { shape, document, bytes: Buffer.byteLength(document), tokens: tokens(document), runs: [], answerBytes: 0 };
  };
  const validates = async (shape: Shape) => (await ask(server.url, token, costlyDocument(shape, { skip: true }), { s: true }));
  let validations = 0;

  const accepted: Candidate[] = [];
  for (const set of Object.keys(FIELD_SETS) as FieldSet[]) {
    for (const aliases of ALIASES) {
      const none: Shape = { set, aliases, first: null, padded: false };
      validations++;
      if (!fatal.has(describeShape(none)) && (await validates(none)).accepted) accepted.push(candidate(none));
      for (const first of FIRSTS) {
        const shape: Shape = { set, aliases, first, padded: false };
        validations++;
        if (fatal.has(describeShape(shape))) break;
        const { accepted: ok } = await validates(shape);
        if (ok) {
          accepted.push(candidate(shape));
          break;
        }
      }
    }
  }
  say(`${validations} documents validated (skipped), ${accepted.length} accepted, in ${elapsed().toFixed(1)} s`);

  const run = async (c: Candidate): Promise<number | null> => {
    const { answer, accepted: ok, why } = await ask(server.url, token, c.document);
    if (server.exit) {
      say(`${describeShape(c.shape)}: the server DIED under it (${exitText(server.exit)}, ${deathCause(server.exit)})`);
      fatal.add(describeShape(c.shape));
      return null;
    }
    if (!ok) {
      c.note = why;
      await waitIdle(server);
      return null;
    }
    c.runs.push(answer.ms);
    c.answerBytes = answer.bytes;
    return answer.ms;
  };

  const phase2Budget = SELECTION_SECONDS * 0.5;
  const ran: Candidate[] = [];
  for (const set of Object.keys(FIELD_SETS) as FieldSet[]) {
    for (const kind of ['none', 'literal'] as const) {
      let last: { aliases: number; ms: number } | null = null;
      for (const c of accepted.filter((a) => a.shape.set === set && (a.shape.first === null) === (kind === 'none'))) {
        if (elapsed() > phase2Budget) {
          c.note = 'not run: selection time spent';
          continue;
        }
        const predicted = last ? last.ms * (c.shape.aliases / last.aliases) : 0;
        if (predicted > CANDIDATE_MAX_MS * 1.25) {
          c.note = `not run: predicted ${ms(predicted)}, over the cap`;
          break;
        }
        const t = await run(c);
        if (server.exit) return null;
        if (t === null) break;
        ran.push(c);
        if (t > CANDIDATE_MAX_MS) {
          c.note = 'over the cap';
          break;
        }
        last = { aliases: c.shape.aliases, ms: t };
      }
    }
  }
  const within = () => ran.filter((c) => c.runs.length && median(c.runs) <= CANDIDATE_MAX_MS && !c.note).sort((a, b) => median(b.runs) - median(a.runs));
  for (const c of ran) say(`${describeShape(c.shape)}: ${c.runs.map(ms).join(', ')}, ${MiB(c.answerBytes)} answered${c.note ? ` (${c.note})` : ''}`);
  for (const c of accepted.filter((a) => !ran.includes(a) && a.note)) say(`${describeShape(c.shape)}: ${c.note}`);

  // Padded variants (~1 MB of document, the same work): the slowest two validated, and the slowest whose time leaves
  // room for the padding's own (about as much again, measured) run once.
  const padded = within().slice(0, 2).map((c) => c.shape);
  const roomy = within().find((c) => median(c.runs) <= CANDIDATE_MAX_MS / 2);
  if (roomy && !padded.includes(roomy.shape)) padded.push(roomy.shape);
  for (const base of padded) {
    const shape = { ...base, padded: true };
    const { accepted: ok, why } = await validates(shape);
    if (!ok) {
      say(`${describeShape(shape)}: refused (${why})`);
      continue;
    }
    const c = candidate(shape);
    if (base !== roomy?.shape || elapsed() > SELECTION_SECONDS * 0.7) {
      say(`${describeShape(shape)} (${c.bytes} bytes): accepted (validated only)`);
      continue;
    }
    const t = await run(c);
    if (server.exit) return null;
    say(`${describeShape(shape)} (${c.bytes} bytes): ${t === null ? c.note : ms(t)}`);
    if (t === null) continue;
    ran.push(c);
    if (t > CANDIDATE_MAX_MS) c.note = 'over the cap';
  }

  // The slowest by its median runs again until it has 3 runs (a first run may be slow for reasons of its own:
  // compiling, a busy machine), within the selection's time.
  const finalists = new Set<Candidate>();
  for (;;) {
    const top = within()[0];
    if (!top || top.runs.length >= 3 || elapsed() + median(top.runs) / 1000 > SELECTION_SECONDS) break;
    finalists.add(top);
    await run(top);
    if (server.exit) return null;
  }
  for (const c of finalists) say(`finalist ${describeShape(c.shape)}: runs ${c.runs.map(ms).join(', ')}, median ${ms(median(c.runs))}`);
  say(`selection took ${elapsed().toFixed(1)} s`);
  return within()[0] ?? null;
}

// ---------------------------------------------------------------------------------------------------------------
// Processes

const exitText = (exit: Exit) => `${exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`}`;

/** The lines of a dead server's stderr that say why (V8's fatal error), else its last line. */
function deathCause(exit: Exit): string {
  const lines = exit.stderrTail.split('\n').map((l) => l.trim()).filter(Boolean);
  const fatal = lines.filter((l) => /FATAL ERROR|out of memory|Allocation failed|RangeError|Error:/i.test(l));
  return (fatal.length ? fatal.slice(0, 2) : lines.slice(-1)).join(' / ').slice(0, 300) || '(nothing on stderr)';
}

async function waitIdle(server: ServerProcess, timeoutMs = 120_000): Promise<void> {
  await Promise.race([server.idle(), server.exited, new Promise((resolve) => setTimeout(resolve, timeoutMs))]);
}

/** Runs a job of bench/abuse-clients.ts in a process of its own; null when it ended without a result. */
function runClients<R>(job: FloodJob | FairnessJob, onProgress: (p: { answered: number; sent: number; elapsedMs: number }) => void, watchdogMs: number): Promise<R | null> {
  const script = path.join(__dirname, `abuse-clients${path.extname(__filename)}`);
  const child = fork(script, [], { execArgv: process.execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve) => {
    let result: R | null = null;
    const watchdog = setTimeout(() => {
      log(`the load generator did not finish within ${(watchdogMs / 1000).toFixed(0)} s: killed`);
      child.kill('SIGKILL');
    }, watchdogMs);
    child.on('message', (m: { progress?: { answered: number; sent: number; elapsedMs: number }; result?: R }) => {
      if (m.progress) onProgress(m.progress);
      if (m.result) result = m.result;
    });
    child.once('exit', () => {
      clearTimeout(watchdog);
      resolve(result);
    });
    child.send({ job });
  });
}

/** The server's resident set, sampled every second while `fn` runs; the highest seen and the last. */
async function sampled<T>(server: ServerProcess, fn: (last: () => Rss | null) => Promise<T>): Promise<{ result: T; peak: number; last: Rss | null }> {
  let peak = 0;
  let last: Rss | null = null;
  let stop = false;
  const loop = (async () => {
    while (!stop && !server.exit) {
      const rss = await server.rss({ timeoutMs: 1000 });
      if (rss) {
        last = rss;
        peak = Math.max(peak, rss.rss, rss.source === 'ipc' ? rss.peakRss : 0);
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  })();
  const result = await fn(() => last);
  stop = true;
  await loop;
  return { result, peak, last };
}

// Production's cost budget and caller share (bench/server-process.ts lifts them for the other benchmarks); the request
// quota stays lifted, so that what is measured is the document limits, the budget and the share, not 600 requests a minute.
const startServer = (url: string, env: Record<string, string> = {}) => ServerProcess.start(url, {
  LOG_LEVEL: 'warn', RATE_LIMIT_GRAPHQL_COST_POINTS: '', GRAPHQL_QUEUE_LENGTH_PER_CALLER: '', ...env, ...JSON.parse(process.env.BENCH_SERVER_ENV ?? '{}') as Record<string, string>,
});

// ---------------------------------------------------------------------------------------------------------------
// Scenarios

interface MemoryFigures {
  scenario: string;
  requests: number;
  result: FloodResult | null;
  before: number;
  after: number | null;
  peak: number;
  exit: Exit | null;
  elapsedMs: number;
}

async function memoryScenario(scenario: string, server: ServerProcess, job: FloodJob): Promise<MemoryFigures> {
  await waitIdle(server);
  const before = (await server.rss({ reset: true }))!.rss;
  log(`${scenario}: RSS before ${MiB(before)}`);
  const started = performance.now();
  const { result, peak: sampledPeak, last } = await sampled(server, (current) => runClients<FloodResult>(job, (p) => {
    const rss = current();
    log(`${scenario}: ${p.answered} answered (${p.sent} sent) in ${(p.elapsedMs / 1000).toFixed(1)} s, RSS ${rss ? MiB(rss.rss) : '?'}`);
  }, (MAX_SECONDS + 120) * 1000));
  const elapsedMs = result?.elapsedMs ?? performance.now() - started;
  let after: number | null = null;
  let peak = Math.max(sampledPeak, last?.rss ?? 0);
  if (!server.exit) {
    await waitIdle(server);
    const rss = await server.rss({ timeoutMs: 10_000 });
    if (rss) {
      after = rss.rss;
      peak = Math.max(peak, rss.peakRss);
    }
  } else {
    // Its exit may come a moment after the last request failed.
    await Promise.race([server.exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
  }
  const figures: MemoryFigures = { scenario, requests: job.count, result, before, after, peak, exit: server.exit, elapsedMs };
  if (result) {
    log(`${scenario}: answers by status: ${counts(result.byStatus)}${result.okWithErrors ? ` (${result.okWithErrors} of the 200s with errors)` : ''}; stopped: ${result.stoppedBy}`);
    log(`${scenario}: first error: ${result.firstError ?? 'none'}`);
  } else {
    log(`${scenario}: the load generator gave no result`);
  }
  log(`${scenario}: RSS after ${after === null ? '- (server gone)' : MiB(after)}, peak ${MiB(peak)}, growth ${after === null ? `+${MiB(peak - before)} (to the peak)` : `+${MiB(after - before)}`}`
    + (result && result.sent ? ` (${((((after ?? peak) - before) / 2 ** 20) / Math.max(1, server.exit && result.failure ? result.failure.answered : result.sent)).toFixed(2)} MiB per request)` : ''));
  log(`${scenario}: ${survival(figures)}`);
  log(`${scenario}: elapsed ${(elapsedMs / 1000).toFixed(1)} s`);
  return figures;
}

function survival(f: { exit: Exit | null; result: FloodResult | null }): string {
  if (!f.exit) return 'the server survived';
  const failure = f.result?.failure;
  const at = failure ? ` at request ${failure.answered + 1} (after ${failure.answered} answers, ${failure.sent} requests sent)` : '';
  return `the server DIED${at}: ${exitText(f.exit)}, ${deathCause(f.exit)}`;
}

interface FairnessFigures { result: FairnessResult | null; peak: number; exit: Exit | null }

/**
 * What one refusal of a caller whose budget is spent costs the server (CPU and heap allocated per request, 50
 * keep-alive connections for BENCH_ABUSE_REFUSAL_SECONDS, 5), beside its floor in the same run: bare Koa answering
 * every request 429 (bench/refusal-floor.ts). A flood's refusals are work for the one event loop the other callers
 * share.
 */
async function refusalScenario(url: string): Promise<string> {
  const seconds = env('BENCH_ABUSE_REFUSAL_SECONDS', 5);
  const { default: autocannon } = await import('autocannon');
  const body = JSON.stringify({ query: '{ me { id email } }' });
  const load = (target: string, token: string) => autocannon({
    url: `${target}/graphql`, method: 'POST', connections: 50, duration: seconds, body,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
  });
  const rows: string[] = [];
  // The service: a budget of 2, spent by the first answer (3 values); every request after is refused at the door.
  const server = await startServer(url, { RATE_LIMIT_GRAPHQL_COST_POINTS: '2' });
  try {
    const token = await demoToken(server.url);
    for (let i = 0; i < 2; i++) await post(server.url, token, body, false, 10_000);
    const { result, probe } = await server.probe(() => load(server.url, token));
    const n = result.requests.total;
    const statuses = Object.entries(result.statusCodeStats ?? {}).map(([s, c]) => `${s} x ${(c as { count: number }).count}`).join(', ');
    log(`refusal: service: ${n} requests (${statuses}), ${(probe.cpuMs / n).toFixed(3)} ms of CPU and ${(probe.allocatedBytes / n / 1024).toFixed(1)} KB allocated per request`);
    rows.push(`| service, budget spent | ${n} (${statuses}) | ${(probe.cpuMs / n).toFixed(3)} ms | ${(probe.allocatedBytes / n / 1024).toFixed(1)} KB |`);
  } finally {
    await server.stop();
  }
  const floor = fork(path.join(__dirname, `refusal-floor${path.extname(__filename)}`), [], { execArgv: process.execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  try {
    const ask = <T>(cmd: string, answer: string) => new Promise<T>((resolve) => {
      const listener = (m: { cmd: string }) => {
        if (m.cmd !== answer) return;
        floor.off('message', listener);
        resolve(m as T);
      };
      floor.on('message', listener);
      if (cmd) floor.send({ cmd });
    });
    const { url: floorUrl } = await ask<{ url: string }>('', 'listening');
    await ask('begin', 'begun');
    const result = await load(floorUrl, 'x');
    const { cpuMs } = await ask<{ cpuMs: number }>('end', 'ended');
    const n = result.requests.total;
    log(`refusal: floor (bare Koa, 429): ${n} requests, ${(cpuMs / n).toFixed(3)} ms of CPU per request`);
    rows.push(`| floor: bare Koa answering 429 | ${n} | ${(cpuMs / n).toFixed(3)} ms | |`);
  } finally {
    floor.send({ cmd: 'stop' });
  }
  return `| refusal, 50 connections, ${seconds} s | requests | CPU per request | allocated per request |\n|---|---|---|---|\n${rows.join('\n')}`;
}

async function fairnessScenario(server: ServerProcess, chosen: Candidate): Promise<FairnessFigures> {
  const tokenA = await demoToken(server.url);
  const tokenB = await demoToken(server.url, 'svc', DEMO_USERS.other);
  await server.rss({ reset: true });
  const job: FairnessJob = {
    kind: 'fairness', url: server.url, tokenA, tokenB, document: chosen.document,
    clientsA: CLIENTS_A, clientsB: CLIENTS_B, seconds: SECONDS, timeoutMs: REQUEST_TIMEOUT_MS,
  };
  log(`fairness: A (${DEMO_USERS.architect}) ${CLIENTS_A} clients resending the costliest document, B (${DEMO_USERS.other}) ${CLIENTS_B} clients alternating { __typename } and { me { id } }, ${SECONDS} s`);
  // A and B in processes of their own: in one, B's latencies would count the time its process spends on A's thousands
  // of answers a second (what B's own client would never see).
  const watchdogMs = (SECONDS + REQUEST_TIMEOUT_MS / 1000 + 120) * 1000;
  const { result, peak } = await sampled(server, async () => {
    const [a, b] = await Promise.all([
      runClients<FairnessResult>({ ...job, clientsB: 0 }, () => {}, watchdogMs),
      runClients<FairnessResult>({ ...job, clientsA: 0 }, () => {}, watchdogMs),
    ]);
    return a && b ? { A: a.A, B: b.B, elapsedMs: Math.max(a.elapsedMs, b.elapsedMs) } : null;
  });
  if (!result) {
    log('fairness: the load generator gave no result');
    return { result, peak, exit: server.exit };
  }
  const { A, B } = result;
  const bTotal = Object.values(B.byStatus).reduce((a, b) => a + b, 0);
  log(`fairness: B: ${bTotal} requests, answered ${B.ok.n} (${pct(B.ok.n, bTotal)}), by status ${counts(B.byStatus)}; refused ${B.refused.n} (${pct(B.refused.n, bTotal)})`);
  log(`fairness: B: latency p50 ${ms(B.all.p50)}, p99 ${ms(B.all.p99)}, max ${ms(B.all.max)} (answers only: p50 ${ms(B.ok.p50)}, p99 ${ms(B.ok.p99)})${B.firstError ? `; first error ${B.firstError}` : ''}`);
  log(`fairness: A: by status ${counts(A.byStatus)}; answers p50 ${ms(A.ok.p50)}, p99 ${ms(A.ok.p99)}`);
  log(`fairness: A: refusals (429/503) ${A.refused.n}: p50 ${ms(A.refused.p50)}, p99 ${ms(A.refused.p99)}, max ${ms(A.refused.max)}; with Retry-After ${A.refusedWithRetryAfter}${A.firstError ? `; first error ${A.firstError}` : ''}`);
  log(`fairness: server peak RSS ${MiB(peak)}; ${server.exit ? `the server DIED: ${exitText(server.exit)}, ${deathCause(server.exit)}` : 'the server survived'}`);
  return { result, peak, exit: server.exit };
}

const pct = (n: number, total: number) => `${total ? ((100 * n) / total).toFixed(1) : '0'} %`;

// ---------------------------------------------------------------------------------------------------------------

export async function run(): Promise<void> {
  await withScratchDatabase('abuse', 4, async (orm, url) => {
    const execute = <T>(sql: string) => orm.em.fork().getConnection().execute(sql) as Promise<T>;
    const counted = await buildDataset(execute, {});
    log(`data set: ${counted.projects} projects, ${counted.templates} templates, ${counted.documents} documents, ${counted.versions} versions`);
    const memory: MemoryFigures[] = [];
    const tables: string[] = [];

    if (SCENARIOS.includes('memory-comments')) {
      const server = await startServer(url);
      try {
        const token = await demoToken(server.url);
        log(`memory-comments: ${COMMENTS} requests { me { id } } # <${COMMENT_BYTES} random printable characters, a new comment each time>, ${CONCURRENCY} at a time, ${DEMO_USERS.architect}`);
        memory.push(await memoryScenario('memory-comments', server, {
          kind: 'flood', url: server.url, token, count: COMMENTS, concurrency: CONCURRENCY, commentBytes: COMMENT_BYTES,
          timeoutMs: REQUEST_TIMEOUT_MS, maxSeconds: MAX_SECONDS, progressEvery: 500,
        }));
      } finally {
        await server.stop();
      }
    }

    let chosen: Candidate | null = null;
    if (SCENARIOS.some((s) => s.startsWith('memory-costliest')) || SCENARIOS.includes('fairness')) {
      // A document that kills the server is left out of the next attempt, on a fresh one.
      const fatal = new Set<string>();
      for (let attempt = 0; attempt < 3 && !chosen; attempt++) {
        // The selection runs dozens of the costliest documents: the budget would refuse them after a few (the
        // scenarios keep it); the caller's share stays.
        const server = await startServer(url, { RATE_LIMIT_GRAPHQL_COST_POINTS: '1000000000000' });
        try {
          chosen = await selectCostliest(server, await demoToken(server.url), fatal);
          if (!chosen && server.exit) log('costliest: the server died during the selection; once more on a fresh one, without that document');
        } finally {
          await server.stop();
        }
      }
      if (chosen) {
        const s = chosen.shape;
        log(`costliest: CHOSEN ${describeShape(s)}: ${s.aliases} aliases, first ${s.first ?? 'absent'}, ${chosen.bytes} bytes, ${chosen.tokens} tokens, `
          + `median ${ms(median(chosen.runs))} of ${chosen.runs.length} runs (${chosen.runs.map(ms).join(', ')}), answer ${MiB(chosen.answerBytes)}`);
        tables.push(`| chosen | field set | aliases | first | bytes | tokens | latency (median) | answer |\n|---|---|---|---|---|---|---|---|\n`
          + `| ${describeShape(s)} | ${s.set} | ${s.aliases} | ${s.first ?? 'absent'} | ${chosen.bytes} | ${chosen.tokens} | ${ms(median(chosen.runs))} | ${MiB(chosen.answerBytes)} |`);
      } else {
        log('costliest: no document was accepted: scenarios memory-costliest and fairness skipped');
      }
    }

    // The costliest document as chosen, and padded to ~1 MB with long aliases (the same work, a larger document).
    const copies = chosen ? [{ scenario: 'memory-costliest', shape: chosen.shape }] : [];
    if (chosen && !chosen.shape.padded) copies.push({ scenario: 'memory-costliest-padded', shape: { ...chosen.shape, padded: true } });
    for (const { scenario, shape } of copies.filter((c) => SCENARIOS.includes(c.scenario))) {
      const server = await startServer(url);
      try {
        const token = await demoToken(server.url);
        const template = costlyDocument(shape, { skip: true, suffix: '_{{N}}' });
        log(`${scenario}: ${COPIES} distinct copies (alias suffix) of ${describeShape(shape)} (${Buffer.byteLength(template)} bytes), every root under @skip(if: $s), { s: true }, ${CONCURRENCY} at a time`);
        memory.push(await memoryScenario(scenario, server, {
          kind: 'flood', url: server.url, token, count: COPIES, concurrency: CONCURRENCY, template, variables: { s: true },
          timeoutMs: REQUEST_TIMEOUT_MS, maxSeconds: MAX_SECONDS, progressEvery: 250,
        }));
      } finally {
        await server.stop();
      }
    }

    let fairness: FairnessFigures | null = null;
    if (chosen && SCENARIOS.includes('fairness')) {
      const server = await startServer(url);
      try {
        fairness = await fairnessScenario(server, chosen);
      } finally {
        await server.stop();
      }
    }

    if (SCENARIOS.includes('refusal')) tables.push(await refusalScenario(url));

    if (memory.length) {
      const rows = memory.map((f) => {
        const r = f.result;
        return `| ${f.scenario} | ${f.requests} | ${r ? counts(r.byStatus) : '-'} | ${MiB(f.before)} | ${f.after === null ? '-' : MiB(f.after)} | ${MiB(f.peak)} | `
          + `+${MiB((f.after ?? f.peak) - f.before)} | ${f.exit ? `no: ${exitText(f.exit)}${r?.failure ? ` at request ${r.failure.answered + 1}` : ''}` : 'yes'} | ${(f.elapsedMs / 1000).toFixed(1)} s |`;
      });
      tables.push(`| scenario | requests | answers by status | RSS before | RSS after | peak RSS | growth | survived | elapsed |\n|---|---|---|---|---|---|---|---|---|\n${rows.join('\n')}`);
    }
    if (fairness?.result) {
      const { A, B } = fairness.result;
      const bTotal = Object.values(B.byStatus).reduce((a, b) => a + b, 0);
      tables.push(`| caller | clients | requests by status | answered | refused (429/503) | latency p50 / p99 / max | refusals p50 / p99 / max | refusals with Retry-After |\n|---|---|---|---|---|---|---|---|\n`
        + `| B (${DEMO_USERS.other}) | ${CLIENTS_B} | ${counts(B.byStatus)} | ${B.ok.n} (${pct(B.ok.n, bTotal)}) | ${B.refused.n} (${pct(B.refused.n, bTotal)}) | ${ms(B.all.p50)} / ${ms(B.all.p99)} / ${ms(B.all.max)} | ${ms(B.refused.p50)} / ${ms(B.refused.p99)} / ${ms(B.refused.max)} | |\n`
        + `| A (${DEMO_USERS.architect}) | ${CLIENTS_A} | ${counts(A.byStatus)} | ${A.ok.n} | ${A.refused.n} | answers: ${ms(A.ok.p50)} / ${ms(A.ok.p99)} / ${ms(A.ok.max)} | ${ms(A.refused.p50)} / ${ms(A.refused.p99)} / ${ms(A.refused.max)} | ${A.refusedWithRetryAfter} |\n`
        + `| server | | | | | | | peak RSS ${MiB(fairness.peak)}, ${fairness.exit ? `died (${exitText(fairness.exit)})` : 'survived'} |`);
    }
    console.log(`\n${tables.join('\n\n')}`);
  });
}
