import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig, readEnvFile } from '../src/platform/config';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tender-env-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const envFile = (name: string, text: string) => {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
};

describe('a .env file', () => {
  it('is read when present: its variables configure the service', () => {
    const env: Record<string, string | undefined> = {};
    const file = envFile('read.env', '# local settings\nPORT=4321\nexport LOG_LEVEL=debug\nPUBLIC_URL="https://tender.example.test"\n');
    expect(readEnvFile(file, env)).toBe(true);
    expect(loadConfig(env)).toMatchObject({ port: 4321, logLevel: 'debug', publicUrl: 'https://tender.example.test' });
  });

  it('loses to the real environment, even to a variable set empty', () => {
    const env: Record<string, string | undefined> = { PORT: '5555', SEED_DEMO: '' };
    readEnvFile(envFile('lose.env', 'PORT=4321\nSEED_DEMO=false\nHOST=127.0.0.1\n'), env);
    expect(env).toEqual({ PORT: '5555', SEED_DEMO: '', HOST: '127.0.0.1' });
  });

  it('is optional: no file, no change', () => {
    const env: Record<string, string | undefined> = {};
    expect(readEnvFile(path.join(dir, 'absent.env'), env)).toBe(false);
    expect(env).toEqual({});
  });

  it('is read by the server at start, from its working directory, under the real environment', () => {
    // Two wrong values in the file, one of them also set right in the real environment: the start stops on
    // the other one, which shows both that the file was read and that the real environment won.
    writeFileSync(path.join(dir, '.env'), 'PORT=not-a-port\nLOG_LEVEL=loud\n');
    const started = spawnSync(process.execPath,
      ['-r', path.join(__dirname, 'support/swc-register.js'), path.join(__dirname, '../src/server.ts')],
      { cwd: dir, env: { PATH: process.env.PATH, PORT: '0' }, encoding: 'utf8', timeout: 60000 });
    expect([started.status, started.stderr.trim()]).toEqual([1, expect.stringMatching(/^Configuration error: LOG_LEVEL must be one of .*, got "loud"$/)]);
  });
});

describe('.env.example', () => {
  it('lists every variable the configuration reads, so that a copy of it is a complete .env', () => {
    // The declaration: src/platform/config.ts and its groups under src/platform/config/, a variable per reader of env.ts.
    const groups = path.join(__dirname, '../src/platform/config');
    const source = [path.join(__dirname, '../src/platform/config.ts'), ...readdirSync(groups).map((file) => path.join(groups, file))]
      .map((file) => readFileSync(file, 'utf8')).join('\n');
    const read = new Set([...source.matchAll(/(?:Var|setting(?:<[^>]*>)?)\('([A-Z_]+)'/g)].map((m) => m[1]));
    expect(read.size).toBeGreaterThan(40);
    const example = readFileSync(path.join(__dirname, '../.env.example'), 'utf8');
    expect([...read].filter((name) => !new RegExp(`^${name}=`, 'm').test(example))).toEqual([]);
  });
});
