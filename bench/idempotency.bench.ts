import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { benchServer, median, withScratchDatabase } from './support';
import { DEMO_IDS } from '../src/seed/demo-ids';

/**
 * What an `Idempotency-Key` costs a write (README "Retrying writes"): trade creations, one at a time, without a key,
 * with a new key each, and retries answered from a stored key; ROUNDS rounds of WRITES each, interleaved, medians.
 *
 * Server: BENCH_DATABASE_URL, else DATABASE_URL, else an embedded cluster under .data/bench-pg; loopback only.
 */

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WRITES = Number(process.env.BENCH_WRITES ?? 200);

export async function run(): Promise<void> {
  await withScratchDatabase('idempotency', 10, async (orm, url) => {
    const server = await benchServer(orm, url);
    const { token } = server;
    try {
      const path = `${server.url}/api/svc/v1/projects/${DEMO_IDS.projects.residence}/trades`;
      const write = async (n: string, key?: string) => {
        const headers: Record<string, string> = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', ...(key ? { 'Idempotency-Key': key } : {}) };
        const started = performance.now();
        const res = await fetch(path, { method: 'POST', headers, body: JSON.stringify({ name: `bench ${n}`, number: n, short_name: 'B' }) });
        await res.arrayBuffer();
        if (res.status !== 201) throw new Error(`write answered ${res.status}`);
        return performance.now() - started;
      };
      const kinds = {
        'without a key': (i: number) => write(`n${i}`),
        'with a new key': (i: number) => write(`k${i}`, randomUUID()),
        'retry, replayed': (i: number) => write('r', `replayed-${i % 10}`),
      };
      for (let i = 0; i < 10; i++) await kinds['retry, replayed'](i);
      const results: Record<string, number[]> = Object.fromEntries(Object.keys(kinds).map((k) => [k, []]));
      for (let round = 1; round <= ROUNDS; round++) {
        for (const [kind, once] of Object.entries(kinds)) {
          const times: number[] = [];
          for (let i = 0; i < WRITES; i++) times.push(await once(round * WRITES + i));
          results[kind].push(median(times));
          console.log(`idempotency: round ${round} ${kind}: median ${median(times).toFixed(2)} ms over ${WRITES} writes`);
        }
      }
      const base = median(results['without a key']);
      console.log('\n| write (POST trade, one at a time) | median of rounds | added |\n|---|---|---|');
      for (const [kind, values] of Object.entries(results)) {
        console.log(`| ${kind} | ${median(values).toFixed(2)} ms | ${(median(values) - base >= 0 ? '+' : '')}${(median(values) - base).toFixed(2)} ms |`);
      }
    } finally {
      await server.close();
    }
  });
}
