#!/usr/bin/env node
/**
 * `node scripts/run-built.js src/server.js [args]` (what `npm start` and `npm run db:*` run): runs a file of
 * the compiled output in dist/, compiling first only when dist/ is missing or older than a source file.
 *
 * The compilation is `tsc --noCheck`: TypeScript is a dependency (not a dev dependency) so that
 * `npm install --omit=dev && npm start` works on a fresh clone, and --noCheck emits without the type
 * declarations (@types/*, dev dependencies) that only the type check needs. The output is the same as the
 * checked `npm run build`; type errors are the business of `npm run typecheck` in CI. A build that finds
 * dist/ up to date costs nothing (no compiler started).
 */
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { copyAssets } = require('./copy-assets');

const ROOT = path.resolve(__dirname, '..');
/** What the build compiles (tsconfig.build.json) or copies (scripts/copy-assets.js), and the settings that shape its output. */
const INPUTS = ['src', 'bench', 'examples/graphql', 'mikro-orm.config.ts', 'tsconfig.json', 'tsconfig.build.json'];
/** Written by every build (tsc's incremental state), touched by ours: the time of the last build. */
const BUILD_STAMP = 'dist/.tsbuildinfo';

/** The newest modification time among files under `p` (0 when there is none). */
function newest(p) {
  let stat;
  try {
    stat = fs.statSync(p);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = 0;
  for (const entry of fs.readdirSync(p)) latest = Math.max(latest, newest(path.join(p, entry)));
  return latest;
}

/** Why dist/ must be built before `entry` runs from it, or null when it is up to date. */
function staleness(root, entry) {
  const stamp = path.join(root, BUILD_STAMP);
  if (!fs.existsSync(path.join(root, 'dist', entry)) || !fs.existsSync(stamp)) return 'dist/ has not been built';
  const built = fs.statSync(stamp).mtimeMs;
  const changed = INPUTS.find((input) => newest(path.join(root, input)) > built);
  return changed ? `${changed} changed since dist/ was built` : null;
}

/** The TypeScript compiler's entry point, or null when TypeScript is not installed. */
function findTsc(root) {
  try {
    return require.resolve('typescript/bin/tsc', { paths: [root] });
  } catch {
    return null;
  }
}

/**
 * Builds dist/ when stale. Returns null when `entry` can run, else the one line that says why not.
 * `tsc` is injectable for the tests.
 */
function ensureBuilt(root, entry, { tsc = findTsc(root), log = (line) => console.error(line) } = {}) {
  const why = staleness(root, entry);
  if (!why) return null;
  if (!tsc) {
    return `${why}, and TypeScript is not installed: run \`npm install\` (TypeScript is a dependency), then start again`;
  }
  log(`${why}: compiling (tsc --noCheck)...`);
  const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--noCheck'], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) return `the build failed (tsc exited with ${result.status ?? result.signal})`;
  // What the service reads at run time besides its code (the IDE's files, its example documents).
  copyAssets(root);
  const stamp = path.join(root, BUILD_STAMP);
  // tsc leaves its state file alone when nothing needed emitting (a file touched, not changed).
  const now = new Date();
  fs.utimesSync(stamp, now, now);
  return null;
}

module.exports = { ensureBuilt, staleness };

if (require.main === module) {
  const [entry, ...args] = process.argv.slice(2);
  if (!entry) {
    console.error('usage: node scripts/run-built.js <file under dist/, e.g. src/server.js> [args]');
    process.exit(2);
  }
  const refusal = ensureBuilt(ROOT, entry);
  if (refusal) {
    console.error(`Cannot start: ${refusal}`);
    process.exit(1);
  }
  // In this process, so that signals (SIGTERM's drain) and the exit code are the service's own.
  process.argv = [process.argv[0], path.join(ROOT, 'dist', entry), ...args];
  require(path.join(ROOT, 'dist', entry));
}
