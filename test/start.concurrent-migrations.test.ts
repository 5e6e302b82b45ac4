import { MIGRATIONS } from '../src/migrations';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { adminQuery, dropDatabase, queryRows } from './support/databases';
import { request } from './support/http';
import { startInstanceProcess, type InstanceProcess } from './support/instance-process';
import { Client } from 'pg';
import { withDatabase } from '../src/platform/database/admin';
import { MIGRATION_LOCK } from '../src/platform/database/migrate';

/**
 * A scale-up or a rolling deploy with a pending migration (issue 21): several instances of the service, each a
 * process of its own, started at the same moment on one empty database.
 */

const serverUrl = process.env.TEST_SERVER_URL!;
const created: string[] = [];

async function emptyDatabase(label: string): Promise<string> {
  const name = `${process.env.TEST_RUN_PREFIX}${label}`;
  await adminQuery(serverUrl, `create database "${name}"`);
  created.push(name);
  return withDatabase(serverUrl, name);
}

afterAll(async () => {
  for (const name of created) await dropDatabase(serverUrl, name);
});

const logLines = (instance: InstanceProcess): Array<Record<string, unknown>> => instance.output().split('\n')
  .filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));

describe('instances started together on an empty database', () => {
  it('all three become ready, and the migrations ran once, by one of them', async () => {
    const url = await emptyDatabase('three_at_once');
    // The test holds the migrations' lock first, so that all three are surely waiting for it together.
    const holder = new Client({ connectionString: url });
    await holder.connect();
    await holder.query('select pg_advisory_lock($1, 0)', [MIGRATION_LOCK]);
    const starting = Promise.all([1, 2, 3].map(() => startInstanceProcess(url, 'http://127.0.0.1:1')));
    const waiting = async () => (await holder.query<{ n: number }>(
      `select count(*)::int as n from pg_locks where locktype = 'advisory' and classid = $1 and objid = 0 and not granted`, [MIGRATION_LOCK])).rows[0].n;
    // Three processes compiling and starting on a loaded machine: a bound of its own, far above the few seconds it takes.
    for (const until = Date.now() + 60_000; (await waiting()) < 3;) {
      if (Date.now() > until) throw new Error('three instances were not waiting for the migrations\' lock within 60 s');
      await new Promise((r) => setTimeout(r, 50));
    }
    await holder.end();
    const instances = await starting;
    try {
      for (const instance of instances) expect(instance.output()).toContain('migrations: another instance is applying them; waiting for it');
      for (const instance of instances) expect((await request(instance.url, 'GET', '/readyz')).status).toBe(200);
      const rows = await queryRows<{ name: string }>(url, 'select name from mikro_orm_migrations order by id');
      expect(rows.map((r) => r.name)).toEqual(MIGRATIONS.map((m) => m.name));
      const outcomes = instances.map((i) => logLines(i).find((l) => /^migrations( applied|: schema up to date)/.test(String(l.msg)))!);
      expect(outcomes.map((o) => o.applied).sort()).toEqual([0, 0, MIGRATIONS.length]);
    } finally {
      await Promise.all(instances.map((i) => i.stop()));
    }
  }, 120000);
});

describe('DATABASE_MIGRATE_ON_START=false (migrations as a release step)', () => {
  let url: string;
  beforeAll(async () => {
    url = await emptyDatabase('release_step');
  });

  it('refuses to start while a migration is pending, with one line saying what to run', async () => {
    const start = startInstanceProcess(url, 'http://127.0.0.1:1', { DATABASE_MIGRATE_ON_START: 'false' });
    const err: Error = await start.then(async (i) => { await i.stop(); return new Error('it started'); }, (e: Error) => e);
    expect(err.message).toMatch(/^the instance exited \(1\) before listening/);
    expect(err.message).toContain(`Tender BFF failed to start: the schema of 127.0.0.1:${new URL(url).port}/${new URL(url).pathname.slice(1)} is behind this build (${MIGRATIONS.length} pending migrations, first ${MIGRATIONS[0].name}): run \`npm run db:migrate\` first`);
    // Nothing was created: no DDL without the migrations.
    expect(await queryRows(url, `select 1 from pg_tables where schemaname = 'public'`)).toEqual([]);
  }, 60000);

  it('starts once the release step (npm run db:migrate, the same lock) applied them', async () => {
    const cli = spawnSync(process.execPath, ['-r', path.join(__dirname, 'support/swc-register.js'), path.join(__dirname, '../src/cli/db.ts'), 'migrate'], {
      env: { PATH: process.env.PATH, NODE_ENV: 'test', LOG_LEVEL: 'info', DATABASE_URL: url, DATABASE_MIGRATE_ON_START: 'false' },
      encoding: 'utf8',
    });
    expect(cli.status).toBe(0);
    expect(cli.stdout).toContain(`"applied":${MIGRATIONS.length}`);
    const instance = await startInstanceProcess(url, 'http://127.0.0.1:1', { DATABASE_MIGRATE_ON_START: 'false' });
    try {
      expect((await request(instance.url, 'GET', '/readyz')).status).toBe(200);
    } finally {
      await instance.stop();
    }
  }, 60000);
});
