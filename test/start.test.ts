import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pkg from '../package.json';

// scripts/ holds plain CommonJS run by `npm start` without any compiler.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { ensureBuilt, staleness } = require('../scripts/run-built.js') as {
  staleness(root: string, entry: string): string | null;
  ensureBuilt(root: string, entry: string, opts: { tsc: string | null; log?: (line: string) => void }): string | null;
};

/** A project tree with one source file and, when `built`, a build of it; times in seconds from now. */
function tree(opts: { sourceAge: number; builtAge?: number }): string {
  const root = mkdtempSync(path.join(tmpdir(), 'tender-start-'));
  const at = (file: string, content: string, ageSeconds: number) => {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), content);
    const t = new Date(Date.now() - ageSeconds * 1000);
    utimesSync(path.join(root, file), t, t);
  };
  at('src/server.ts', 'export {};\n', opts.sourceAge);
  if (opts.builtAge !== undefined) {
    at('dist/src/server.js', '"use strict";\n', opts.builtAge);
    at('dist/.tsbuildinfo', '{}', opts.builtAge);
  }
  return root;
}

describe('npm start (scripts/run-built.js)', () => {
  const roots: string[] = [];
  const make = (opts: { sourceAge: number; builtAge?: number }) => {
    const root = tree(opts);
    roots.push(root);
    return root;
  };
  afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));

  it('runs the compiled server from dist/, with no compile step before it, and TypeScript is a dependency, not a dev dependency', () => {
    expect(pkg.scripts.start).toBe('node scripts/run-built.js src/server.js');
    expect(pkg.scripts).not.toHaveProperty('prestart');
    expect(pkg.dependencies).toHaveProperty('typescript');
    expect(pkg.devDependencies).not.toHaveProperty('typescript');
  });

  it('builds only when dist/ is missing or older than a source file', () => {
    expect(staleness(make({ sourceAge: 60 }), 'src/server.js')).toBe('dist/ has not been built');
    expect(staleness(make({ sourceAge: 10, builtAge: 60 }), 'src/server.js')).toBe('src changed since dist/ was built');
    expect(staleness(make({ sourceAge: 60, builtAge: 10 }), 'src/server.js')).toBeNull();
  });

  it('starts an up-to-date build without looking for a compiler', () => {
    expect(ensureBuilt(make({ sourceAge: 60, builtAge: 10 }), 'src/server.js', { tsc: null })).toBeNull();
  });

  it('refuses with one line saying what to do when dist/ is stale and TypeScript is missing', () => {
    expect(ensureBuilt(make({ sourceAge: 10, builtAge: 60 }), 'src/server.js', { tsc: null }))
      .toBe('src changed since dist/ was built, and TypeScript is not installed: run `npm install` (TypeScript is a dependency), then start again');
  });
});

describe('package.json engines', () => {
  /** `^M.m.p` ranges joined by `||`, the only form engines uses here. */
  const satisfies = (version: string, range: string) => range.split('||').some((part) => {
    const [M, m, p] = part.trim().replace(/^\^/, '').split('.').map(Number);
    const [vM, vm, vp] = version.replace(/^v/, '').split('.').map(Number);
    return vM === M && (vm > m || (vm === m && vp >= p));
  });

  it('names the Node lines CI runs the suite on, and the Node running this suite is one of them', () => {
    expect(pkg.engines.node).toBe('^20.19.0 || ^22.15.0 || ^24.0.0');
    expect(satisfies(process.version, pkg.engines.node)).toBe(true);
    expect(satisfies('v22.14.0', pkg.engines.node)).toBe(false);
    expect(satisfies('v24.21.0', pkg.engines.node)).toBe(true);
    expect(readFileSync(path.join(__dirname, '../.ci/run'), 'utf8')).toContain('EXTRA_NODE_LINES=${EXTRA_NODE_LINES-"22 24"}');
  });
});
