import 'reflect-metadata';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { demoToken, withScratchDatabase } from './support';
import { buildDataset, BENCH_PROJECT_IDS_SQL } from './dataset';
import { ServerProcess } from './server-process';

/**
 * Overload (issue 25): the service in a process of its own over the 1,005-project data set, with its production
 * bounds; 50 then 200 closed-loop clients for BENCH_SECONDS (default 30) in another process (bench/overload-clients.ts),
 * 70 % reads and 30 % writes across REST and the GraphQL dashboard. Per class: the answers' p50 and p99, the
 * refusals (503) and the longest a refusal waited; and the server's peak resident memory.
 */

const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const CLIENTS = (process.env.BENCH_CLIENTS ?? '50,200').split(',').map(Number);
const DASHBOARD = '{ projects(first: 50) { nodes { id name statistics { answered budgets { total simulatedCost projectDeviation { value percent } } } '
  + 'templates { id stats { contractors contractorsAnswers } documents { id contractor { name } versions { version subTotal discount status } } } } } }';

interface ClassResult { answered: number; p50: number; p99: number; refused: number; refusedMaxMs: number; other: Record<string, number>; sample?: string }

function runClients(job: object): Promise<Record<string, ClassResult>> {
  const script = path.join(__dirname, `overload-clients${path.extname(__filename)}`);
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [...process.execArgv, script, JSON.stringify(job)], { maxBuffer: 1 << 22 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`load generator failed: ${stderr || err.message}`));
      resolve(JSON.parse(stdout) as Record<string, ClassResult>);
    });
  });
}

export async function run(): Promise<void> {
  await withScratchDatabase('overload', 4, async (orm, url) => {
    const execute = <T>(sql: string) => orm.em.fork().getConnection().execute(sql) as Promise<T>;
    await buildDataset(execute, {});
    const projectIds = (await execute<Array<{ id: string }>>(BENCH_PROJECT_IDS_SQL)).map((r) => r.id).slice(0, 200);
    // BENCH_SERVER_ENV='{"REST_MAX_CONCURRENT_READS":"4"}': settings to compare.
    const server = await ServerProcess.start(url, { LOG_LEVEL: 'warn', ...JSON.parse(process.env.BENCH_SERVER_ENV ?? '{}') as Record<string, string> });
    try {
      const token = await demoToken(server.url);
      const rows: string[] = [];
      for (const clients of CLIENTS) {
        const { result, probe } = await server.probe(() => runClients({ url: server.url, token, clients, seconds: SECONDS, projectIds, dashboard: DASHBOARD }));
        for (const [kind, r] of Object.entries(result)) {
          const other = Object.entries(r.other).map(([s, n]) => `${n} x ${s}`).join(', ') || '0';
          rows.push(`| ${clients} | ${kind} | ${r.answered} | ${r.p50.toFixed(0)} ms | ${r.p99.toFixed(0)} ms | ${r.refused} | ${r.refusedMaxMs.toFixed(0)} ms | ${other} |`);
          console.log(`overload: ${clients} clients, ${kind}: ${r.answered} answered, p50 ${r.p50.toFixed(0)} ms, p99 ${r.p99.toFixed(0)} ms, ${r.refused} refused (longest wait ${r.refusedMaxMs.toFixed(0)} ms), other ${other}${r.sample ? ` (e.g. ${r.sample})` : ''}`);
        }
        const rest = Object.entries(result).filter(([k]) => k.startsWith('REST')).map(([, r]) => r.p99);
        const dashboard = result['GraphQL dashboard'];
        console.log(`overload: ${clients} clients: dashboard p99 / slowest REST p99 = ${dashboard && rest.length ? (dashboard.p99 / Math.max(...rest)).toFixed(2) : '-'}x; peak RSS ${(probe.peakRss / 2 ** 20).toFixed(0)} MiB`);
        rows.push(`| ${clients} | peak RSS | ${(probe.peakRss / 2 ** 20).toFixed(0)} MiB | | | | | |`);
      }
      console.log(`\n| clients | class | answered | p50 | p99 | refused (503) | longest refused wait | other |\n|---|---|---|---|---|---|---|---|\n${rows.join('\n')}`);
    } finally {
      await server.stop();
    }
  });
}
