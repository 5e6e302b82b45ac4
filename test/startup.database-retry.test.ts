import pino from 'pino';
import { loadConfig } from '../src/platform/config';
import { openDatabase } from '../src/platform/database/database';
import { DATA_MODEL } from '../mikro-orm.config';
import { startOwnCluster, type OwnCluster } from './support/own-cluster';
import { freePort } from './support/ports';

/** A logger whose lines the test reads. */
function capturingLogger(): { log: pino.Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level: 'info', base: undefined }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  return { log, lines };
}

const attemptLines = (lines: Array<Record<string, unknown>>) => lines.filter((l) => String(l.msg).startsWith('database not reachable'));

describe('starting while the database is down (DATABASE_START_TIMEOUT_MS)', () => {
  let cluster: OwnCluster;
  let url: string;
  /** A port nothing listens on. */
  let closed: number;
  beforeAll(async () => {
    closed = await freePort();
    cluster = await startOwnCluster('startup');
    url = await cluster.createDatabase('tender', { seed: false });
    await cluster.stop();
  }, 60000);
  afterAll(() => cluster?.stop());

  it('retries with backoff, one log line per attempt, then fails with one clear line naming the bound', async () => {
    const { log, lines } = capturingLogger();
    // Nothing listens on this port.
    const config = loadConfig({ NODE_ENV: 'test', DATABASE_URL: `postgres://postgres:secret@127.0.0.1:${closed}/tender`, DATABASE_START_TIMEOUT_MS: '1500', DATABASE_CONNECT_TIMEOUT_MS: '300' });
    const started = Date.now();
    const err: Error = await openDatabase(config, DATA_MODEL, log).then(() => new Error('opened'), (e: Error) => e);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
    expect(err.message).toMatch(new RegExp(`^the database at 127\\.0\\.0\\.1:${closed}/tender did not answer within 1500 ms \\(DATABASE_START_TIMEOUT_MS\\) after \\d+ attempts; last error: connect ECONNREFUSED 127\\.0\\.0\\.1:${closed}$`));
    expect(err.message).not.toMatch(/\n|secret/);
    const attempts = attemptLines(lines);
    expect(attempts.map((l) => l.attempt)).toEqual(attempts.map((_, i) => i + 1));
    expect(attempts.length).toBeGreaterThanOrEqual(3);
    expect(attempts.slice(0, -1).every((l) => l.msg === 'database not reachable, retrying')).toBe(true);
    expect(attempts.at(-1)!.msg).toBe('database not reachable, giving up');
    // Exponential backoff, the last wait cut to what is left of the bound.
    expect(attempts.slice(0, 3).map((l) => l.retry_in_ms)).toEqual([250, 500, expect.any(Number)]);
    expect(attempts.every((l) => l.database === `127.0.0.1:${closed}/tender`)).toBe(true);
  });

  it('opens the database as soon as it comes up within the bound, then serves from it', async () => {
    const { log, lines } = capturingLogger();
    const config = loadConfig({ NODE_ENV: 'test', DATABASE_URL: url, DATABASE_START_TIMEOUT_MS: '20000', DATABASE_CONNECT_TIMEOUT_MS: '300' });
    const opening = openDatabase(config, DATA_MODEL, log);
    await new Promise((r) => setTimeout(r, 800));
    await cluster.restart();
    const db = await opening;
    try {
      expect(attemptLines(lines).length).toBeGreaterThanOrEqual(1);
      // Reachable, then the migrations' line (none pending: the database was migrated before it went down).
      expect(lines.slice(-2)).toEqual([
        expect.objectContaining({ msg: 'database reachable', database: `127.0.0.1:${cluster.port}/tender` }),
        expect.objectContaining({ msg: 'migrations: schema up to date', applied: 0 }),
      ]);
      expect(await db.orm.em.fork().getConnection().execute('select count(*)::int as n from mikro_orm_migrations')).toEqual([{ n: expect.any(Number) }]);
    } finally {
      await db.close();
    }
  });

  it('does not wait for what waiting cannot fix: a wrong password fails at once', async () => {
    const { log, lines } = capturingLogger();
    const wrong = new URL(url);
    wrong.password = 'not-the-password';
    const config = loadConfig({ NODE_ENV: 'test', DATABASE_URL: wrong.toString(), DATABASE_START_TIMEOUT_MS: '20000' });
    await expect(openDatabase(config, DATA_MODEL, log)).rejects.toThrow(/password authentication failed/);
    expect(attemptLines(lines)).toEqual([]);
  });
});
