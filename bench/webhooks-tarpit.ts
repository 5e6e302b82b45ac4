import path from 'node:path';
import { epochMs, percentile, sleep } from './commit-latency';
import { Fleet } from './fanout-fleet';
import { demoToken } from './support';
import { afterFleet, changeBus, createEndpoint, DELIVERING, EMPTY_OUTBOX, ORGANIZATIONS, outbox, ROOT, type WebhooksCluster } from './webhooks-cluster';
import { HookReceiver, Tarpit } from './webhooks-receivers';

// The tarpit part of `npm run bench webhooks` (issue 40; described in bench/webhooks.bench.ts): how late another
// tenant's deliveries are while one organization's endpoints hang.

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const PROBE_GAP_MS = Number(process.env.BENCH_TARPIT_GAP_MS ?? 500);
const TARPIT_ENDPOINTS = Number(process.env.BENCH_TARPIT_ENDPOINTS ?? 12);
const TESTS_PER_ENDPOINT = Number(process.env.BENCH_TARPIT_TESTS ?? 10);
/** After the last probe, how long its receipts are waited for. */
const WAIT_SECONDS = Number(process.env.BENCH_TARPIT_WAIT_SECONDS ?? 90);
const INSTANCES = (process.env.BENCH_TARPIT_INSTANCES ?? '1,2').split(',').map(Number);

interface Probe {
  eventId: string;
  /** When the 202 came back, epoch ms. */
  answeredAt: number;
}

interface Measure {
  probes: number;
  /** 202 to receipt, ms, of the probes received. */
  delays: number[];
  /** Connections the tarpit held at most at once (attempts in flight to it). */
  tarpitHeld: number;
  /** The flood: tests queued, and how long queueing them took, ms. */
  flood: { queued: number; ms: number } | null;
}

interface Figures {
  instances: number;
  baseline: Measure;
  flood: Measure;
}

class Api {
  /** 429 answers waited out (Retry-After) and retried. */
  throttled = 0;
  constructor(private readonly baseUrl: string, readonly token: string) {}

  /** POST .../webhooks/{id}/test: the queued event's id and when the 202 came back (after any 429 waited out). */
  async test(endpointId: string): Promise<Probe> {
    for (;;) {
      const res = await fetch(`${this.baseUrl}/api/svc/v1/webhooks/${endpointId}/test`, { method: 'POST', headers: { Authorization: `Bearer ${this.token}` } });
      const answeredAt = epochMs();
      const body = await res.text();
      if (res.status === 429) {
        this.throttled++;
        await sleep(Math.max(100, Number(res.headers.get('retry-after') ?? 1) * 1000));
        continue;
      }
      if (res.status !== 202) throw new Error(`webhooks: a test event answered ${res.status}: ${body.slice(0, 300)}`);
      return { eventId: (JSON.parse(body) as { event: { id: string } }).event.id, answeredAt };
    }
  }
}

/** Organization B's test events, one every PROBE_GAP_MS for SECONDS, each timed from its 202 to its receipt. */
async function probe(api: Api, endpoint: string, receiver: HookReceiver, tarpit: Tarpit, flood: Measure['flood']): Promise<Measure> {
  const probes: Probe[] = [];
  const started = Date.now();
  for (let k = 0; Date.now() < started + SECONDS * 1000; k++) {
    probes.push(await api.test(endpoint));
    await sleep(Math.max(0, started + (k + 1) * PROBE_GAP_MS - Date.now()));
  }
  const deadline = Date.now() + WAIT_SECONDS * 1000;
  while (probes.some((p) => !receiver.first.has(p.eventId)) && Date.now() < deadline) await sleep(50);
  const delays = probes.filter((p) => receiver.first.has(p.eventId)).map((p) => receiver.first.get(p.eventId)!.at - p.answeredAt);
  return { probes: probes.length, delays, tarpitHeld: tarpit.maxOpen, flood };
}

async function hasBreaker(admin: WebhooksCluster['admin']): Promise<boolean> {
  const { rows } = await admin.query(`select 1 from information_schema.columns where table_name = 'webhook_endpoint' and column_name = 'consecutive_failures'`);
  return rows.length > 0;
}

async function measure(db: WebhooksCluster, receiver: HookReceiver, tarpit: Tarpit, instances: number): Promise<Figures> {
  const { admin, url } = db;
  const label = `tarpit-${instances}`;
  const bus = changeBus(label);
  const fleet = await Fleet.start({
    databaseUrl: url, ...bus, instances, logDir: path.join(ROOT, 'instances'), label,
    // The limit on test events per endpoint (where the build has one) lifted: B's endpoint is asked for 80 in a minute.
    env: { ...DELIVERING, WEBHOOK_MANUAL_SENDS_PER_MINUTE: '10000', ...JSON.parse(process.env.BENCH_SERVER_ENV ?? '{}') as Record<string, string> },
  });
  try {
    const base = fleet.instances[0].url;
    const api = new Api(base, await demoToken(base));
    // The endpoints, made once (the rows stay from one configuration to the next).
    const { rows } = await admin.query<{ id: string; organization_id: string }>(`select id, organization_id from webhook_endpoint
      where description like 'webhooks bench, tarpit%' order by created_at, id`);
    let a = rows.filter((r) => r.organization_id === ORGANIZATIONS.a).map((r) => r.id);
    let [b] = rows.filter((r) => r.organization_id === ORGANIZATIONS.b).map((r) => r.id);
    if (!a.length) {
      a = [];
      for (let i = 0; i < TARPIT_ENDPOINTS; i++) a.push(await createEndpoint(base, api.token, ORGANIZATIONS.a, `${tarpit.url}/tarpit/${i}`, 'webhooks bench, tarpit (A)'));
      b = await createEndpoint(base, api.token, ORGANIZATIONS.b, `${receiver.url}/hook/b`, 'webhooks bench, tarpit (B)');
    }
    await admin.query(EMPTY_OUTBOX);
    // Each configuration from healthy endpoints: no failing streak, breaker closed (the columns exist from issue 40 on).
    await admin.query(`update webhook_endpoint set failing_since = null${await hasBreaker(admin) ? ', consecutive_failures = 0, paused_until = null' : ''}`);
    tarpit.reset();
    receiver.reset();

    // Nothing else queued.
    const baseline = await probe(api, b, receiver, tarpit, null);
    console.log(line(instances, 'baseline', baseline));
    tarpit.reset();

    // A's flood: every endpoint's tests at once, each endpoint's one after the other.
    const floodStarted = epochMs();
    const queued = (await Promise.all(a.map(async (id) => {
      for (let k = 0; k < TESTS_PER_ENDPOINT; k++) await api.test(id);
      return TESTS_PER_ENDPOINT;
    }))).reduce((x, y) => x + y, 0);
    const flood = await probe(api, b, receiver, tarpit, { queued, ms: epochMs() - floodStarted });
    console.log(line(instances, 'under the flood', flood));
    const left = await outbox(admin);
    console.log(`webhooks: tarpit, ${instances} instance(s): after the flood's measure, ${left.pending} deliveries pending; the tarpit accepted `
      + `${tarpit.accepted} connections; ${api.throttled} test events answered 429 (waited out and sent again)`);
    const problems = fleet.instances.flatMap((i) => i.problems());
    if (problems.length) console.log(`webhooks: ${label}: ${problems.length} WARN+ log line(s), the first: ${problems.slice(0, 3).join(' || ').slice(0, 600)}`);
    return { instances, baseline, flood };
  } finally {
    await fleet.stop();
    tarpit.reset();
    await admin.query(EMPTY_OUTBOX);
    await afterFleet(admin);
    await bus.clear();
  }
}

const ms = (v: number) => (Number.isNaN(v) ? '-' : v >= 1000 ? `${(v / 1000).toFixed(1)} s` : `${v.toFixed(0)} ms`);
const cell = (m: Measure) => `p50 ${ms(percentile(m.delays, 50))}, max ${ms(m.delays.length ? Math.max(...m.delays) : NaN)} (${m.delays.length} of ${m.probes} received)`;

function line(instances: number, what: string, m: Measure): string {
  return `webhooks: tarpit, ${instances} instance(s), ${what}${m.flood ? ` (${m.flood.queued} tests queued to A's tarpit in ${(m.flood.ms / 1000).toFixed(1)} s)` : ''}: `
    + `B's test events, 202 → receipt ${cell(m)}, p99 ${ms(percentile(m.delays, 99))}; the tarpit held ${m.tarpitHeld} connections at most at once`;
}

export async function tarpitPart(db: WebhooksCluster): Promise<void> {
  const receiver = await new HookReceiver().start();
  const tarpit = await new Tarpit().start();
  try {
    console.log(`webhooks: tarpit: ${TARPIT_ENDPOINTS} endpoints of Atelier Demo (A) on a tarpit, ${TARPIT_ENDPOINTS * TESTS_PER_ENDPOINT} test events to them; `
      + `one endpoint of Atelier Nord (B) on a receiver, a test event every ${PROBE_GAP_MS} ms for ${SECONDS} s; webhooks' settings as the build ships them `
      + 'but WEBHOOK_HTTPS_ONLY=false, WEBHOOK_ALLOWED_NETWORKS=127.0.0.0/8 and WEBHOOK_MANUAL_SENDS_PER_MINUTE=10000 (an API limit); '
      + `configurations: ${INSTANCES.join(', ')} instance(s)`);
    const runs: Figures[] = [];
    for (const n of INSTANCES) runs.push(await measure(db, receiver, tarpit, n));
    console.log(`\n| B's test events, 202 → receipt | ${runs.map((r) => `${r.instances} instance${r.instances > 1 ? 's' : ''}`).join(' | ')} |`);
    console.log(`|---|${runs.map(() => '---').join('|')}|`);
    console.log(`| nothing else queued (baseline) | ${runs.map((r) => cell(r.baseline)).join(' | ')} |`);
    console.log(`| **under A's tarpit flood** | ${runs.map((r) => `**${cell(r.flood)}**`).join(' | ')} |`);
    console.log(`| tarpit connections held at most at once (flood) | ${runs.map((r) => r.flood.tarpitHeld).join(' | ')} |`);
  } finally {
    await tarpit.close();
    await receiver.close();
  }
}
