import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Every path of this repository named in README.md and docs/ exists: in a link (`[text](docs/faults.md)`) or in
 * code (`` `src/platform/shutdown.ts` ``, `` `platform/http/lifecycle.ts` ``, which is under src/), or in prose with a
 * file's extension (test/shutdown.test.ts). A path with a placeholder (`<domain>`, `*`) names a pattern, not a file, and is left out; so are URLs.
 */

const ROOT = path.resolve(__dirname, '..');
const TOP = ['src', 'test', 'bench', 'scripts', 'docs', 'examples', '.ci'];
const UNDER_SRC = ['platform', 'modules', 'seed', 'cli', 'migrations'];

function documents(): string[] {
  return ['README.md', ...readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
}

/** The repository paths a markdown text names, with the line each is on. */
export function namedPaths(text: string): Array<{ line: number; path: string }> {
  const found: Array<{ line: number; path: string }> = [];
  text.split('\n').forEach((line, i) => {
    const candidates = [
      ...line.matchAll(/`([^`\s]+)`/g),
      ...line.matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g),
      // In prose: a path with a file's extension.
      ...line.matchAll(/(?<![\w./`-])((?:src|test|bench|scripts|docs|examples|platform|modules)\/[\w./-]+\.(?:ts|md|js|cjs|mjs|json|graphql|yaml|sql))(?![\w/`])/g),
    ].map((m) => m[1]);
    for (let candidate of new Set(candidates)) {
      candidate = candidate.replace(/[.,;:]$/, '').replace(/:\d+(-\d+)?$/, '');
      if (/^[a-z]+:\/\//i.test(candidate) || /[<>*{}$|]/.test(candidate)) continue;
      const first = candidate.split('/')[0];
      if (!candidate.includes('/') || !(TOP.includes(first) || UNDER_SRC.includes(first))) continue;
      // A name without an extension may be a command or an id (`modules/<x>` aside); only files and folders we can tell.
      found.push({ line: i + 1, path: UNDER_SRC.includes(first) ? `src/${candidate}` : candidate });
    }
  });
  return found;
}

describe('paths named in README.md and docs/', () => {
  it('exist in the repository', () => {
    const missing: string[] = [];
    for (const doc of documents()) {
      for (const named of namedPaths(readFileSync(path.join(ROOT, doc), 'utf8'))) {
        if (!existsSync(path.join(ROOT, named.path))) missing.push(`${doc}:${named.line} ${named.path}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('are found in links and in code, under src/ or at the top', () => {
    // The check's own proof: a made-up path in each form is found (and would be reported missing).
    const text = 'See [faults](docs/no-such.md), `src/platform/nothing.ts`, `platform/http/nothing.ts`, `modules/<domain>/` and test/none.test.ts.';
    expect(namedPaths(text).map((p) => p.path)).toEqual(['src/platform/nothing.ts', 'src/platform/http/nothing.ts', 'docs/no-such.md', 'test/none.test.ts']);
  });
});
