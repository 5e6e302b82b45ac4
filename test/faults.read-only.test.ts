import { Client } from 'pg';
import { DEMO_IDS, DEMO_USERS } from '../src/seed/demo-data';
import { startAppOn, type TestApp } from './support/app';
import { tokenFor } from './support/auth';
import { queryRows } from './support/databases';
import { gql } from './support/graphql';
import { request, type HttpResponse } from './support/http';
import { startOwnCluster, type OwnCluster } from './support/own-cluster';
import { parseExposition } from './support/prometheus';
import { expectServiceUnavailable } from './support/retry-later';
import { CREATE_TRADE, FAULT_ENV, sleep } from './support/failover-load';

/**
 * A primary that takes no writes (issue 33): `default_transaction_read_only = on` set on a cluster of this file's own
 * and reloaded, the service's sessions ended so that they reconnect (what a demoted primary, a storage-full guard or an
 * operator's fence looks like to the service: SQLSTATE 25006 on every write). Writes answer 503 + Retry-After in their
 * endpoint's shape, reads go on, /readyz, /loadz and /metrics say the database takes no writes; once writable again the
 * service recovers by itself.
 */

const P = '/api/svc/v1';
const PRJ = DEMO_IDS.projects.residence;
/** How long the service may take to notice a change of the primary's writability (its checks may poll). */
const NOTICE_MS = 5000;
const ENV = FAULT_ENV;

let cluster: OwnCluster;
let dbUrl: string;
let t: TestApp;
let token: string;
const logLines: Array<Record<string, unknown>> = [];

const restWrite = (name: string) => request(t.url, 'POST', `${P}/projects/${PRJ}/trades`, { token, body: { name, number: '33', short_name: 'RO' }, timeoutMs: 10000 });
const graphqlWrite = (name: string) => gql(t.url, token, CREATE_TRADE, { p: PRJ, i: { name, number: '34', shortName: 'RG' } }, { timeoutMs: 10000 });
const writable = async () => parseExposition((await request(t.url, 'GET', '/metrics')).text).value('db_primary_writable');

/** Polls `check` until it holds or NOTICE_MS passed; the last value and how long it took. */
async function within<T>(check: () => Promise<T>, holds: (v: T) => boolean): Promise<{ value: T; ms: number }> {
  const start = Date.now();
  for (;;) {
    const value = await check();
    if (holds(value) || Date.now() - start > NOTICE_MS) return { value, ms: Date.now() - start };
    await sleep(100);
  }
}

/** Sets or resets default_transaction_read_only for the whole server, reloads, and ends the service's sessions. */
async function readOnly(on: boolean): Promise<void> {
  const admin = new Client({ connectionString: cluster.serverUrl + '/postgres' });
  await admin.connect();
  try {
    await admin.query(on ? 'alter system set default_transaction_read_only = on' : 'alter system reset default_transaction_read_only');
    await admin.query('select pg_reload_conf()');
    await sleep(100);
    // Its sessions reconnect (the pool's, the probes', the decoder's): a restarted or demoted server looks like this.
    await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = 'tender' and pid <> pg_backend_pid()
      and backend_type in ('client backend', 'walsender')`);
  } finally {
    await admin.end();
  }
}

beforeAll(async () => {
  cluster = await startOwnCluster('read-only');
  dbUrl = await cluster.createDatabase('tender');
  t = await startAppOn(dbUrl, ENV, undefined, { write: (line) => void logLines.push(JSON.parse(line)) });
  token = await tokenFor(t.url, DEMO_USERS.architect);
}, 60000);
afterAll(async () => {
  await t?.close();
  await cluster?.stop();
});

describe('a writable primary', () => {
  it('says so: db_primary_writable 1, /readyz 200', async () => {
    expect((await restWrite('ro-before')).status).toBe(201);
    expect((await request(t.url, 'GET', '/readyz')).status).toBe(200);
    expect(await writable()).toBe(1);
  });
});

describe('a read-only primary (default_transaction_read_only = on, reloaded, sessions ended)', () => {
  let rest: HttpResponse[] = [];
  let graphql: HttpResponse[] = [];
  beforeAll(async () => {
    await readOnly(true);
    // Three of each: the first on a fresh connection, the others on connections the pool kept.
    rest = [];
    graphql = [];
    for (let i = 0; i < 3; i++) {
      rest.push(await restWrite(`ro-refused-${i}`));
      graphql.push(await graphqlWrite(`ro-refused-graphql-${i}`));
    }
  }, 30000);

  it('answers a REST write 503 + Retry-After ({code: 503, message}), never a 500', () => {
    for (const res of rest) expectServiceUnavailable(res, 'rest');
    // The fault was the real one: PostgreSQL refused the write in a read-only transaction.
    expect(JSON.stringify(logLines)).toMatch(/cannot execute INSERT in a read-only transaction/);
  });

  it('answers a GraphQL mutation HTTP 503 + Retry-After, SERVICE_UNAVAILABLE', () => {
    for (const res of graphql) expectServiceUnavailable(res, 'graphql');
  });

  it('keeps serving reads: REST GET and GraphQL query 200', async () => {
    expect((await request(t.url, 'GET', `${P}/projects/${PRJ}/trades`, { token })).status).toBe(200);
    const query = await gql(t.url, token, '{ projects(first: 5) { totalCount nodes { id } } }');
    expect([query.status, query.body.errors]).toEqual([200, undefined]);
  });

  it('answers /readyz 503 + Retry-After, saying the database takes no writes', async () => {
    const { value: ready, ms } = await within(() => request(t.url, 'GET', '/readyz'), (r) => r.status === 503);
    console.log(`read-only primary: /readyz ${ready.status} after ${ms} ms: ${ready.text}`);
    expectServiceUnavailable(ready, 'rest');
    expect(ready.body.message).toMatch(/writ|read-only|recovery/i);
  });

  it('says so in /metrics: db_primary_writable 0', async () => {
    expect((await within(writable, (v) => v === 0)).value).toBe(0);
  });

  it('says so in /loadz (beside its classes: their names say "write" already)', async () => {
    const { classes: _classes, ...loadz } = (await request(t.url, 'GET', '/loadz')).body as Record<string, unknown>;
    expect(JSON.stringify(loadz)).toMatch(/writ|read-only|recovery/i);
  });

  it('stores none of the refused writes', async () => {
    expect(await queryRows(dbUrl, `select name from project_trade where name like 'ro-refused%'`)).toEqual([]);
  });
});

describe('the primary writable again (reset, reloaded)', () => {
  beforeAll(() => readOnly(false), 30000);

  it('recovers by itself, without a restart: writes 2xx, /readyz 200, db_primary_writable 1 within 5 s', async () => {
    const started = Date.now();
    const rest = await within(() => restWrite(`ro-after-${Date.now()}`), (r) => r.status === 201);
    const graphql = await within(() => graphqlWrite(`ro-after-graphql-${Date.now()}`), (r) => r.status === 200 && !r.body.errors);
    const ready = await within(() => request(t.url, 'GET', '/readyz'), (r) => r.status === 200);
    const metric = await within(writable, (v) => v === 1);
    console.log(`writable again: REST write ${rest.value.status}, GraphQL ${graphql.value.status}, /readyz ${ready.value.status}, metric ${metric.value}, all within ${Date.now() - started} ms`);
    expect([rest.value.status, graphql.value.status, graphql.value.body.errors, ready.value.status, metric.value]).toEqual([201, 200, undefined, 200, 1]);
  });
});
