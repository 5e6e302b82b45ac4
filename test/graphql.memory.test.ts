import { execFile } from 'node:child_process';
import path from 'node:path';

// The caches keyed by a client's document (src/platform/graphql/document-cache.ts, executor.ts) hold what they count,
// whatever documents a hostile client sends (issue 31: +1 GB from 2,000 distinct copies of one document). Measured in
// a process of its own with a collection on demand (test/support/memory-probe.ts), over documents drawn by fast-check.

interface Probe {
  parsed: { heap: number; estimate: number };
  compiled: { heap: number; estimate: number; entries: number };
  flood: { heap: number; documents: { entries: number; bytes: number }; compiled: { entries: number; bytes: number }; bytes: number };
}

const MiB = 2 ** 20;
const BOUNDS = { documents: 2 * MiB, compiled: 8 * MiB };

function probe(seed: number, sample: number, flood: number): Promise<Probe> {
  const root = path.join(__dirname, '..');
  const args = ['--expose-gc', '-r', path.join(__dirname, 'support/swc-register.js'), path.join(__dirname, 'support/memory-probe.ts'), JSON.stringify({ seed, sample, flood, bounds: BOUNDS })];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { cwd: root, maxBuffer: 1 << 20, timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`memory probe failed: ${stderr || err.message}`));
      resolve(JSON.parse(stdout.trim().split('\n').pop()!) as Probe);
    });
  });
}

describe('the caches keyed by a document', () => {
  let result: Probe;
  beforeAll(async () => {
    result = await probe(Number(process.env.FUZZ_SEED ?? 20261129), 40, 400);
  }, 90_000);

  it('count at least what a parsed document holds on the heap (its source and its nodes), and not many times more', () => {
    const { heap, estimate } = result.parsed;
    expect(estimate).toBeGreaterThanOrEqual(heap);
    expect(estimate).toBeLessThan(heap * 3);
  });

  it('count at least what a compiled query holds on the heap (the generated functions, their closures, its document)', () => {
    expect(result.compiled.entries).toBe(40);
    expect(result.compiled.estimate).toBeGreaterThanOrEqual(result.compiled.heap);
  });

  it('stay within their bounds under 400 distinct documents sent twice each, and the heap grows by no more than the bounds', () => {
    const { flood } = result;
    expect(flood.documents.bytes).toBeLessThanOrEqual(BOUNDS.documents);
    expect(flood.compiled.bytes).toBeLessThanOrEqual(BOUNDS.compiled);
    // Evictions happened: the flood's documents were far more than the bounds (megabytes of text alone).
    expect(flood.bytes).toBeGreaterThan(BOUNDS.documents + BOUNDS.compiled);
    expect(flood.heap).toBeLessThan(BOUNDS.documents + BOUNDS.compiled + 2 * MiB);
  });
});
