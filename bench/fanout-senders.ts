import type { Client } from 'pg';
import { sleep } from './commit-latency';
import { liveProcessCpuMs } from './proc-cpu';

/** What the server's WAL senders used over a window. */
export interface SenderFigures {
  /** utime + stime over the window, all senders, ms. */
  cpuMs: number;
  /** Senders seen during the window. */
  seen: number;
  /** Of them, started (backend_start) within the window: counted from 0. */
  started: number;
  /** Of them, gone before its end: counted up to their last sample. */
  ended: number;
  /** application_name of each, counted: `tender-bff change decoder x 16`. */
  names: string;
}

interface Sender {
  name: string;
  /** CPU at the window's start (0 for one started within it), and at its last sample, ms. */
  first: number;
  last: number;
  startedInWindow: boolean;
  gone: boolean;
}

/**
 * The CPU of the server's WAL senders (`pg_stat_activity` where `backend_type = 'walsender'`, which lists them from
 * their connection on, before they stream; pg_stat_replication only once they do) from /proc/<pid>/stat, sampled when
 * the window starts, every `everyMs` during it and when it ends. A WAL sender that ends within the window can no
 * longer be read at the end (its time goes to the postmaster's reaped children, counted in the cluster's figure):
 * it counts up to its last sample, so at most `everyMs` of its time is missed. One that starts within it counts from 0
 * (a process's times start at 0: all of it is in the window).
 */
export class SenderSampler {
  private senders = new Map<number, Sender>();
  private windowStart = 0;
  private running = false;
  private loop: Promise<void> | null = null;

  constructor(private readonly client: Client, private readonly everyMs = 500) {}

  async start(): Promise<void> {
    this.senders = new Map();
    this.windowStart = Date.now();
    this.running = true;
    await this.sample();
    this.loop = (async () => {
      while (this.running) {
        await sleep(this.everyMs);
        if (this.running) await this.sample();
      }
    })();
  }

  async stop(): Promise<SenderFigures> {
    this.running = false;
    await this.loop;
    const live = await this.sample();
    const all = [...this.senders.entries()];
    for (const [pid, s] of all) if (!live.has(pid)) s.gone = true;
    const names = new Map<string, number>();
    for (const [, s] of all) names.set(s.name, (names.get(s.name) ?? 0) + 1);
    return {
      cpuMs: all.reduce((n, [, s]) => n + (s.last - s.first), 0),
      seen: all.length,
      started: all.filter(([, s]) => s.startedInWindow).length,
      ended: all.filter(([, s]) => s.gone).length,
      names: [...names].map(([name, n]) => `${name || '(no name)'} x ${n}`).join(', ') || 'none',
    };
  }

  /** One sample; the pids of the senders alive and readable now. */
  private async sample(): Promise<Set<number>> {
    const { rows } = await this.client.query<{ pid: number; started: number; name: string }>(`select pid,
      extract(epoch from backend_start) * 1000 as started, application_name as name from pg_stat_activity where backend_type = 'walsender'`);
    const live = new Set<number>();
    for (const row of rows) {
      const cpu = liveProcessCpuMs(row.pid);
      if (cpu === null) continue;
      live.add(row.pid);
      const known = this.senders.get(row.pid);
      if (known) {
        known.last = cpu;
        continue;
      }
      const startedInWindow = Number(row.started) >= this.windowStart;
      this.senders.set(row.pid, { name: row.name, first: startedInWindow ? 0 : cpu, last: cpu, startedInWindow, gone: false });
    }
    return live;
  }
}
