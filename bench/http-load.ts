import { execFile } from 'node:child_process';
import path from 'node:path';

export interface LoadResult {
  /** Requests per second, averaged over the run. */
  requests: number;
  latencyP50: number;
  latencyP99: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  total: number;
}

/**
 * Runs autocannon against `url` from a child process (bench/load.ts), cycling through `paths`; rejects when
 * any answer was not a 2xx, so that a benchmark never reports the speed of errors.
 */
export function load(url: string, paths: string[], opts: { headers?: Record<string, string>; connections: number; seconds: number }): Promise<LoadResult> {
  const job = JSON.stringify({ url, paths, headers: opts.headers ?? {}, connections: opts.connections, seconds: opts.seconds });
  // Same loader flags as this process: compiled JavaScript under dist/, or the TypeScript sources under swc.
  const script = path.join(__dirname, `load${path.extname(__filename)}`);
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [...process.execArgv, script, job], { maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`load generator failed: ${stderr || err.message}`));
      const result = JSON.parse(stdout) as LoadResult;
      if (result.non2xx || result.errors || result.timeouts) {
        return reject(new Error(`load on ${url}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`));
      }
      resolve(result);
    });
  });
}
