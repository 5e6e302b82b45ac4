import { execFile } from 'node:child_process';
import path from 'node:path';
import { Client } from 'pg';
import { DEMO_IDS } from '../src/seed/demo-ids';
import { startEmbeddedCluster, type EmbeddedCluster } from '../src/platform/database/embedded';
import { withDatabase } from '../src/platform/database/admin';
import { startTestApp, type TestApp } from './support/app';
import { adminQuery, queryRows } from './support/databases';
import { freePort } from './support/ports';
import { tokenFor } from './support/auth';
import { eventually, subscribe, wsClient, type TestWsClient } from './support/subscriptions';

// Change capture without NOTIFY (issue 32, docs/subscriptions.md): the triggers write transactional logical
// messages, which take no lock, and each instance decodes them over a temporary replication slot of its own.

/** The notification queue's lock, waited on at commit by every transaction that notified (PreCommit_Notify). */
const NOTIFY_LOCK_WAITERS = `select count(*)::int as n from pg_locks
  where locktype = 'object' and classid = 'pg_database'::regclass and objid = 0 and not granted`;

let t: TestApp;
const clients: TestWsClient[] = [];
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.dispose()));
  await t?.close();
});

describe('the write path', () => {
  it('holds no NOTIFY: no function of the schema notifies, the change triggers write logical messages', async () => {
    const functions = await queryRows<{ name: string; notifies: boolean; emits: boolean }>(t.databaseUrl, `select p.proname as name,
        p.prosrc like '%pg_notify(%' as notifies, p.prosrc like '%pg_logical_emit_message(true, %' as emits
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = current_schema()`);
    expect(functions.filter((f) => f.notifies).map((f) => f.name)).toEqual([]);
    const emitting = functions.filter((f) => f.emits).map((f) => f.name);
    for (const name of ['change_event_document_version', 'change_event_project', 'caller_change_membership', 'caller_truncate', 'webhook_enqueue']) {
      expect(emitting).toContain(name);
    }
  });

  it('lets 32 concurrent writers commit with no session ever waiting on the notification queue lock, and their changes reach a subscriber', async () => {
    const token = await tokenFor(t.url, 'architect@demo.test');
    const ws = wsClient(t.url, token);
    clients.push(ws);
    const project = DEMO_IDS.projects.residence;
    const sub = subscribe<{ projectChanged: { documentIds: string[] } }>(ws.client,
      'subscription($ids: [ID!]) { projectChanged(projectIds: $ids) { documentIds } }', { ids: [project] });
    await eventually(async () => (await t.app.metrics.subscriptionsActive.get()).values.some((v) => v.value === 1), 'subscribed');
    // Versions of every project: each writer on rows of its own as far as there are (row locks are not what is measured).
    const versions = await queryRows<{ id: string }>(t.databaseUrl, 'select id from document_version order by id');
    const writers = await Promise.all(Array.from({ length: 32 }, async () => {
      const client = new Client({ connectionString: t.databaseUrl });
      await client.connect();
      return client;
    }));
    const sampler = new Client({ connectionString: t.databaseUrl });
    await sampler.connect();
    let waiting = 0;
    let samples = 0;
    let writing = true;
    const sampling = (async () => {
      while (writing) {
        waiting += (await sampler.query<{ n: number }>(NOTIFY_LOCK_WAITERS)).rows[0].n;
        samples++;
      }
    })();
    try {
      // Each writer updates a version (its change event and statistics triggers fire) in transactions of its own.
      await Promise.all(writers.map(async (client, i) => {
        for (let n = 0; n < 10; n++) {
          await client.query('begin');
          await client.query('update document_version set discount = discount where id = $1', [versions[i % versions.length].id]);
          await client.query('commit');
        }
      }));
    } finally {
      writing = false;
      await sampling;
      await sampler.end();
      await Promise.all(writers.map((c) => c.end()));
    }
    expect(samples).toBeGreaterThan(0);
    expect(waiting).toBe(0);
    // The 320 commits coalesce into updates of the project (SUBSCRIPTIONS_COALESCE_MS): at least one arrives.
    expect((await sub.next()).data?.projectChanged.documentIds.length).toBeGreaterThan(0);
  });
});

describe('the decoder', () => {
  const slotsOf = async () => (await queryRows<{ slot_name: string; temporary: boolean; active: boolean }>(t.databaseUrl,
    `select slot_name, temporary, active from pg_replication_slots where database = current_database()`));

  it('holds one temporary slot per instance, active, and none once its connection is gone: no slot outlives its instance', async () => {
    const slots = await slotsOf();
    expect(slots).toEqual([expect.objectContaining({ temporary: true, active: true })]);
    const other = await startTestApp({ AUTH_ISSUER: t.url }, undefined, { database: t.databaseUrl });
    await eventually(async () => (await slotsOf()).length === 2, 'a second slot');
    await other.close();
    await eventually(async () => (await slotsOf()).length === 1, 'the second slot gone with its instance');
    // A connection cut by the server: its slot goes with it, and the instance makes a new one.
    await queryRows(t.databaseUrl, `select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'tender-bff change decoder' and datname = current_database()`);
    await eventually(async () => {
      const now = await slotsOf();
      return now.length === 1 && now[0].slot_name !== slots[0].slot_name && now[0].active;
    }, 'a new slot of its own');
  });
});

describe('a server that cannot decode', () => {
  let cluster: EmbeddedCluster;
  let serverUrl: string;
  beforeAll(async () => {
    // wal_level = replica, as the machine's PostgreSQL and many servers run.
    cluster = await startEmbeddedCluster({
      dataDir: path.resolve(`.data/test-no-logical-${process.pid}`), port: await freePort(), fast: true, postgresFlags: ['-c', 'wal_level=replica'],
    });
    serverUrl = cluster.serverUrl;
    await adminQuery(serverUrl, 'create database tender');
  }, 60000);
  afterAll(() => cluster?.stop());

  it('refuses the start with one line saying what to set, and exits 1', async () => {
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      execFile(process.execPath, ['-r', path.join(__dirname, 'support/swc-register.js'), path.join(__dirname, '../src/server.ts')], {
        env: { PATH: process.env.PATH, NODE_ENV: 'test', LOG_LEVEL: 'warn', PORT: '0', DATABASE_URL: withDatabase(serverUrl, 'tender') },
        timeout: 60_000,
      }, (err, stdout, stderr) => resolve({ code: err ? (err as { code?: number }).code ?? null : 0, output: `${stdout}${stderr}` }));
    });
    expect(code).toBe(1);
    const refusal = output.split('\n').filter((line) => line.startsWith('Tender BFF failed to start'));
    expect(refusal).toEqual([expect.stringMatching(/^Tender BFF failed to start: change capture needs wal_level = logical on the server DATABASE_DIRECT_URL reaches \(it is replica\): set it and restart PostgreSQL/)]);
  }, 60000);
});
