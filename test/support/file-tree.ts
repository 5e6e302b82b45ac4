import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** Runs `check` in a temporary folder holding `files` (path → text), then removes the folder. */
export function inFileTree<T>(files: Record<string, string>, check: (dir: string) => T): T {
  const dir = mkdtempSync(path.join(tmpdir(), 'tree-'));
  try {
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), text);
    }
    return check(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
