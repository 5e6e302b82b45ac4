import 'reflect-metadata';
import { performance } from 'node:perf_hooks';
import { benchServer, withScratchDatabase } from './support';
import { DEMO_IDS } from '../src/seed/demo-ids';

/**
 * Archive latency under steady writes (issue 8, item 3): WRITERS clients create trades on one project
 * as fast as the service answers them; after a warm-up the project is archived, and the time to the
 * archive's answer is measured. ROUNDS rounds, one fresh project each. Also counts the rows created
 * after `archived_at` (must be 0) and the writes answered per second.
 *
 * Server: BENCH_DATABASE_URL, else DATABASE_URL, else an embedded cluster under .data/bench-pg; loopback only.
 */

const WRITERS = 15;
const ROUNDS = 5;
const WARM_UP_MS = 1500;
/** A round whose archive is not answered within this time is reported as starved. */
const GIVE_UP_MS = 30000;

export async function run(): Promise<void> {
  await withScratchDatabase('archive', 10, async (orm, url) => {
    const server = await benchServer(orm, url);
    const { token } = server;
    try {
      const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
      const api = async (method: string, path: string, body?: unknown) => {
        const res = await fetch(`${server.url}/api/svc/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
        return { status: res.status, body: (await res.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
      };

      const latencies: number[] = [];
      for (let round = 1; round <= ROUNDS; round++) {
        const created = await api('POST', '/projects', {
          name: `Bench archive ${round}`, construction_type: 'office', managers: [{ id: DEMO_IDS.users.architect }],
          trade_list_id: DEMO_IDS.tradeLists.standard, response_type: 'DPGF',
        });
        const projectId: string = created.body.project.id;
        let stop = false;
        let writes = 0;
        const writer = async (w: number) => {
          for (let n = 0; !stop; n++) {
            await api('POST', `/projects/${projectId}/trades`, { name: `w${w}-${n}`, number: `${w}.${n}`, short_name: 'W' });
            writes++;
          }
        };
        const writers = Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
        await new Promise((r) => setTimeout(r, WARM_UP_MS));
        const rate = writes / (WARM_UP_MS / 1000);
        const started = performance.now();
        const archive = api('PUT', `/projects/${projectId}/archive`).then(() => performance.now() - started);
        const latency = await Promise.race([archive, new Promise<null>((r) => setTimeout(() => r(null), GIVE_UP_MS))]);
        stop = true;
        await writers;
        await archive;
        const [late] = await orm.em.fork().getConnection().execute<{ n: string }[]>(
          'select count(*) as n from project_trade t join project p on p.id = t.project_id where p.id = ? and t.created_at > p.archived_at', [projectId]);
        console.log(`archive: round ${round}: ${latency === null ? `no answer within ${GIVE_UP_MS} ms (starved)` : `answered in ${latency.toFixed(0)} ms`}`
          + ` with ${WRITERS} writers at ${rate.toFixed(0)} writes/s; rows created after archived_at: ${late.n}`);
        if (latency !== null) latencies.push(latency);
      }
      latencies.sort((a, b) => a - b);
      if (latencies.length) console.log(`archive: median ${latencies[Math.floor(latencies.length / 2)].toFixed(0)} ms, max ${latencies[latencies.length - 1].toFixed(0)} ms over ${latencies.length} answered rounds`);
    } finally {
      await server.close();
    }
  });
}
