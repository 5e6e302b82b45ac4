// First, as in src/server.ts: tracing, when OTEL_* configures it, patches `pg` and `http` before they load.
import '../src/platform/telemetry/preload';
import 'reflect-metadata';
import v8 from 'node:v8';
import { MikroORM } from '@mikro-orm/postgresql';
import { ormConfig } from '../mikro-orm.config';
import { createApp, listen } from '../src/app';
import { loadConfig } from '../src/platform/config';
import { createLogger } from '../src/platform/logger';

/**
 * The service as `npm start` runs it (src/app.ts, production configuration), in a process of its own so that
 * its memory is its own, plus a probe the dashboard benchmark drives over IPC: between `begin` and `end` it
 * counts SQL statements, CPU time, heap bytes allocated and the peak resident set.
 *
 * Bytes allocated: V8's GC profiler gives the used heap before and after every collection of the window, so
 * allocated = (used at end - used at start) + sum over collections of (used before - used after): what was
 * freed was allocated before, and what is still there too. It counts the JavaScript heap (buffers outside it,
 * such as socket chunks, are not in it); a collection of the window that frees bytes allocated before it makes
 * the figure a little high, by at most one young generation (a few MiB over the whole window).
 *
 * `rss` answers the resident set now, its highest value sampled every 10 ms since the first `rss` (or the last
 * with `reset`), the kernel's high-water mark, and the heap: the abuse benchmark follows the memory a hostile
 * caller makes the server keep.
 */

interface Window {
  statements: number;
  cpu: NodeJS.CpuUsage;
  usedHeap: number;
  profiler: v8.GCProfiler;
  peakRss: number;
  sampler: NodeJS.Timeout;
}

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const orm = await MikroORM.init(ormConfig(config.databaseUrl!, {}, config.database));
  const app = await createApp({ config, orm, log: createLogger(config) });
  const running = await listen(app, '127.0.0.1', 0);
  // Tokens are bound to the issuer: the address really listened at.
  config.publicUrl = running.url;
  config.auth.issuer = running.url;

  let statements = 0;
  orm.em.getKnex().on('query', () => { statements++; });
  let window: Window | null = null;
  // Requests still being answered: a load run's clients stop sending, not the server answering what it got.
  let inFlight = 0;
  let whenIdle: Array<() => void> = [];
  running.server.on('request', (_req, res: import('node:http').ServerResponse) => {
    inFlight++;
    res.on('close', () => {
      if (--inFlight > 0) return;
      for (const resolve of whenIdle) resolve();
      whenIdle = [];
    });
  });

  // The resident set's peak, sampled from the first `rss` command on (no timer before: other benchmarks pay nothing).
  let peakRss = 0;
  let rssSampler: NodeJS.Timeout | null = null;

  process.on('message', (message: { cmd: string; reset?: boolean }) => {
    if (message.cmd === 'rss') {
      const now = process.memoryUsage();
      if (!rssSampler || message.reset) peakRss = now.rss;
      rssSampler ??= setInterval(() => { peakRss = Math.max(peakRss, process.memoryUsage.rss()); }, 10).unref();
      peakRss = Math.max(peakRss, now.rss);
      process.send!({
        cmd: 'rss', rss: now.rss, peakRss, maxRss: process.resourceUsage().maxRSS * 1024,
        heapUsed: now.heapUsed, heapTotal: now.heapTotal, external: now.external,
      });
    } else if (message.cmd === 'begin') {
      if (window) clearInterval(window.sampler);
      const profiler = new v8.GCProfiler();
      const w: Window = {
        statements, cpu: process.cpuUsage(), usedHeap: v8.getHeapStatistics().used_heap_size, profiler,
        peakRss: process.memoryUsage.rss(),
        sampler: setInterval(() => { w.peakRss = Math.max(w.peakRss, process.memoryUsage.rss()); }, 10),
      };
      profiler.start();
      window = w;
      process.send!({ cmd: 'begun' });
    } else if (message.cmd === 'end' && window) {
      const w = window;
      window = null;
      clearInterval(w.sampler);
      const gcs = w.profiler.stop()?.statistics ?? [];
      const freed = gcs.reduce((sum, gc) => sum + gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize, 0);
      const cpu = process.cpuUsage(w.cpu);
      process.send!({
        cmd: 'ended',
        statements: statements - w.statements,
        cpuMs: (cpu.user + cpu.system) / 1000,
        allocatedBytes: v8.getHeapStatistics().used_heap_size - w.usedHeap + freed,
        gcs: gcs.length,
        gcMs: gcs.reduce((sum, gc) => sum + gc.cost, 0) / 1000,
        peakRss: Math.max(w.peakRss, process.memoryUsage.rss()),
        maxRss: process.resourceUsage().maxRSS * 1024,
      });
    } else if (message.cmd === 'idle') {
      if (inFlight === 0) process.send!({ cmd: 'idle' });
      else whenIdle.push(() => process.send!({ cmd: 'idle' }));
    } else if (message.cmd === 'stop') {
      void running.close().then(() => app.stop()).then(() => orm.close(true)).then(() => process.exit(0));
    }
  });
  process.send!({ cmd: 'listening', url: running.url });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
