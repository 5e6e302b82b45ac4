import autocannon from 'autocannon';

/**
 * Load generator of the HTTP benchmarks, run as a process of its own (bench/http-load.ts) so that the
 * server under test has its event loop to itself. Reads a JSON job from argv[2]: base URL, paths to cycle
 * through, headers, connections and seconds; prints autocannon's result as JSON on stdout.
 */
interface Job {
  url: string;
  paths: string[];
  headers: Record<string, string>;
  connections: number;
  seconds: number;
}

async function main(): Promise<void> {
  const job = JSON.parse(process.argv[2]) as Job;
  let next = 0;
  const result = await autocannon({
    url: job.url,
    connections: job.connections,
    duration: job.seconds,
    headers: job.headers,
    requests: [{ setupRequest: (req) => ({ ...req, path: job.paths[next++ % job.paths.length] }) }],
  });
  process.stdout.write(JSON.stringify({
    requests: result.requests.average, latencyP50: result.latency.p50, latencyP99: result.latency.p99,
    non2xx: result.non2xx, errors: result.errors, timeouts: result.timeouts, total: result.requests.total,
  }));
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
