import http from 'node:http';
import { performance } from 'node:perf_hooks';

/**
 * The overload mix of bench/overload.bench.ts, run as a process of its own so that the server under test has its
 * cores' event loop to itself: `clients` closed-loop clients, each with a connection of its own, for `seconds`,
 * 70 % reads and 30 % writes across REST and the GraphQL dashboard. Prints, per class, the answers' latencies
 * (p50, p99), the refusals (503) and how long the slowest refusal waited, and anything else that went wrong.
 */
interface Job {
  url: string;
  token: string;
  clients: number;
  seconds: number;
  projectIds: string[];
  dashboard: string;
}

type Kind = 'REST read' | 'REST write' | 'GraphQL dashboard';

interface Call {
  kind: Kind;
  method: string;
  path: string;
  body?: string;
}

function pick(job: Job, i: number, n: number): Call {
  const project = job.projectIds[(i * 7 + n) % job.projectIds.length];
  const roll = (i * 31 + n * 17) % 100;
  if (roll < 25) return { kind: 'REST read', method: 'GET', path: '/api/svc/v1/projects?limit=20' };
  if (roll < 45) return { kind: 'REST read', method: 'GET', path: `/api/svc/v1/projects/${project}/statistics` };
  if (roll < 55) return { kind: 'REST read', method: 'GET', path: `/api/svc/v1/projects/${project}/templates` };
  if (roll < 70) return { kind: 'GraphQL dashboard', method: 'POST', path: '/graphql', body: JSON.stringify({ query: job.dashboard }) };
  return {
    kind: 'REST write', method: 'POST', path: `/api/svc/v1/projects/${project}/trades`,
    body: JSON.stringify({ name: `Load ${i}-${n}`, number: `L${n % 100}`, short_name: 'LD' }),
  };
}

function send(job: Job, call: Call, agent: http.Agent): Promise<{ status: number; ms: number; text: string }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = http.request(job.url + call.path, {
      method: call.method, agent,
      headers: { Authorization: `Bearer ${job.token}`, ...(call.body ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(call.body) } : {}) },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { if (text.length < 300) text += chunk; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, text }));
    });
    req.on('error', (err) => resolve({ status: 0, ms: performance.now() - started, text: err.message }));
    req.end(call.body);
  });
}

const quantile = (sorted: number[], q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : 0);

async function main(): Promise<void> {
  const job = JSON.parse(process.argv[2]) as Job;
  const deadline = performance.now() + job.seconds * 1000;
  const results = new Map<Kind, { ok: number[]; refused: number[]; other: Record<string, number>; sample?: string }>();
  await Promise.all(Array.from({ length: job.clients }, async (_, i) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let n = 0; performance.now() < deadline; n++) {
        const call = pick(job, i, n);
        const { status, ms, text } = await send(job, call, agent);
        let r = results.get(call.kind);
        if (!r) results.set(call.kind, (r = { ok: [], refused: [], other: {} }));
        if (status >= 200 && status < 300) r.ok.push(ms);
        else if (status === 503) r.refused.push(ms);
        else {
          r.other[status] = (r.other[status] ?? 0) + 1;
          r.sample ??= `${call.method} ${call.path}: ${status} ${text.slice(0, 200)}`;
        }
      }
    } finally {
      agent.destroy();
    }
  }));
  const out: Record<string, unknown> = {};
  for (const [kind, r] of results) {
    const ok = r.ok.sort((a, b) => a - b);
    const refused = r.refused.sort((a, b) => a - b);
    out[kind] = {
      answered: ok.length, p50: quantile(ok, 0.5), p99: quantile(ok, 0.99),
      refused: refused.length, refusedMaxMs: refused.at(-1) ?? 0, other: r.other, sample: r.sample,
    };
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
