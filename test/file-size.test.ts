import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * Each source file one concern (docs/architecture.md): none above 400 lines unless its first line says why
 * (`// Over 400 lines: ...`). Tests are not held to it.
 */

const ROOT = path.resolve(__dirname, '..');
const LIMIT = 400;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sources(full);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [full] : [];
  });
}

/** The files over the limit that do not say why. */
export function unexplained(files: Array<{ name: string; text: string }>): string[] {
  return files.filter(({ text }) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0) > LIMIT && !/^\/\/ Over 400 lines: \S/.test(text))
    .map(({ name }) => name);
}

describe('source files', () => {
  it(`are at most ${LIMIT} lines, or say why on their first line`, () => {
    const files = sources(path.join(ROOT, 'src')).map((file) => ({ name: path.relative(ROOT, file), text: readFileSync(file, 'utf8') }));
    expect(unexplained(files)).toEqual([]);
  });

  it('catches a long file without a reason, and lets one with a reason pass', () => {
    const long = 'const a = 1;\n'.repeat(LIMIT + 1);
    expect(unexplained([{ name: 'long.ts', text: long }, { name: 'said.ts', text: `// Over 400 lines: data.\n${long}` }, { name: 'short.ts', text: 'x\n'.repeat(LIMIT) }]))
      .toEqual(['long.ts']);
  });
});
