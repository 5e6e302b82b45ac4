import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

// CPU time as Linux accounts it (/proc), for the benches that say who used the machine (bench/write-ceiling.bench.ts,
// bench/fanout.bench.ts): a process's, a PostgreSQL cluster's, the machine's.

const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK']).toString().trim() || 100);

/** Fields after the command of /proc/<pid>/stat (the command may hold spaces): index 0 is field 3 (state). */
function statFields(pid: number | string): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** utime + stime (fields 14, 15) of a process, ms; with `children`, its reaped children's too (16, 17); 0 once it is gone. */
export function processCpuMs(pid: number, children = false): number {
  return liveProcessCpuMs(pid, children) ?? 0;
}

/** As processCpuMs, but null once the process is gone: for a caller that must tell an ended process from an idle one. */
export function liveProcessCpuMs(pid: number, children = false): number | null {
  const f = statFields(pid);
  if (!f) return null;
  const ticks = Number(f[11]) + Number(f[12]) + (children ? Number(f[13]) + Number(f[14]) : 0);
  return ticks * TICK_MS;
}

/** The cluster's CPU so far: the postmaster (with its ended backends) and every live child, ms. */
export function clusterCpuMs(postmaster: number): number {
  let total = processCpuMs(postmaster, true);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const f = statFields(entry);
    if (f && Number(f[1]) === postmaster) total += (Number(f[11]) + Number(f[12])) * TICK_MS;
  }
  return total;
}

/** The machine's CPU time so far (/proc/stat, all cores), ms: total, idle, iowait. */
export function machineCpuMs(): { total: number; idle: number; iowait: number } {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest times are inside user and nice)
  const total = cpu.slice(0, 8).reduce((a, b) => a + b, 0);
  return { total: total * TICK_MS, idle: cpu[3] * TICK_MS, iowait: cpu[4] * TICK_MS };
}
