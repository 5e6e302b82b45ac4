import http from 'node:http';
import net from 'node:net';
import { DEMO_IDS, DEMO_PASSWORD, DEMO_USERS } from '../src/seed/demo-data';
import { startTestApp, type TestApp } from './support/app';
import { tokenFor } from './support/auth';
import { gql } from './support/graphql';
import { request } from './support/http';
import { startInstanceProcess, type InstanceProcess } from './support/instance-process';
import { eventually, subscribe, wsClient, type TestWsClient } from './support/subscriptions';

/**
 * Two instances of the service on one database behind a round-robin balancer with no sticky sessions:
 * instance A runs in this process, instance B is its own process (src/server.ts through swc), so nothing
 * held in memory can be shared between them. The client only knows the balancer, whose URL is both
 * instances' PUBLIC_URL; subscribers (issue 12) connect to each instance directly.
 */

const P = '/api/svc/v1';
const PRJ = DEMO_IDS.projects.residence;
const TPL = DEMO_IDS.templates.residenceGrosOeuvre;
const DOC = DEMO_IDS.documents.residenceGoPetit;

interface Balancer { url: string; backends: string[]; servedBy: string[]; close(): Promise<void> }

/** Sends each request to the next backend in turn and records which one answered it. */
async function roundRobin(): Promise<Balancer> {
  const backends: string[] = [];
  const servedBy: string[] = [];
  let next = 0;
  const server = http.createServer((req, res) => {
    const backend = backends[next++ % backends.length];
    servedBy.push(backend);
    const upstream = http.request(backend + req.url, { method: req.method, headers: req.headers, agent: false }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    backends,
    servedBy,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

let balancer: Balancer;
let a: TestApp;
let b: InstanceProcess;
const wsClients: TestWsClient[] = [];

beforeAll(async () => {
  balancer = await roundRobin();
  a = await startTestApp({ PUBLIC_URL: balancer.url });
  b = await startInstanceProcess(a.databaseUrl, balancer.url);
  balancer.backends.push(a.url, b.url);
}, 60000);

afterAll(async () => {
  await Promise.all(wsClients.map((c) => c.dispose()));
  await b?.stop();
  await a?.close();
  await balancer?.close();
});

describe('several instances on one database behind a balancer without sticky sessions', () => {
  it('serve one client through sign-in, refresh, a write, a read and a download, each on the other instance than the one before', async () => {
    const form = (fields: Record<string, string>) => ({
      raw: new URLSearchParams({ client_id: 'svc-api', ...fields }).toString(),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    const signIn = await request(balancer.url, 'POST', '/auth/token', form({ grant_type: 'password', username: DEMO_USERS.architect, password: DEMO_PASSWORD, scope: 'svc email profile' }));
    expect(signIn.status).toBe(200);
    const refresh = await request(balancer.url, 'POST', '/auth/token', form({ grant_type: 'refresh_token', refresh_token: signIn.body.refresh_token }));
    expect(refresh.status).toBe(200);
    const token = refresh.body.access_token as string;

    const write = await request(balancer.url, 'POST', `${P}/projects/${PRJ}/trades`, { token, body: { name: 'Serrurerie multi-instance', number: '19', short_name: 'SM' } });
    expect(write.status).toBe(201);
    const read = await request(balancer.url, 'GET', `${P}/projects/${PRJ}/trades`, { token });
    expect(read.status).toBe(200);
    expect(JSON.stringify(read.body)).toContain(write.body.trade.id);

    const listed = await request(balancer.url, 'GET', `${P}/projects/${PRJ}/templates/${TPL}/documents/${DOC}/download/1`, { token });
    expect(listed.status).toBe(200);
    const file = listed.body.files[0] as { url: string };
    expect(file.url.startsWith(`${balancer.url}/files/`)).toBe(true);
    const served = await request(file.url, 'GET', '');
    expect(served.status).toBe(200);
    expect(served.text.length).toBeGreaterThan(0);

    // Every step went to the instance the previous one did not: the URL signed by one was served by the other.
    expect(balancer.servedBy).toEqual([a.url, b.url, a.url, b.url, a.url, b.url]);
  }, 30000);
});

const PROJECT_CHANGED = `subscription($ids: [ID!]) { projectChanged(projectIds: $ids) {
  projectId changes project { trades { id name } } } }`;
const CREATE_TRADE = `mutation($p: ID!, $i: CreateProjectTradeInput!) { createProjectTrade(projectId: $p, input: $i) { trade { id } } }`;

/** Subscriptions an instance runs, from its /metrics. */
async function activeOn(url: string): Promise<number> {
  const text = (await request(url, 'GET', '/metrics')).text;
  return [...text.matchAll(/^graphql_subscriptions_active\{[^}]*\} (\d+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
}

function subscribeOn(url: string, token: string) {
  const c = wsClient(url, token);
  wsClients.push(c);
  return subscribe<{ projectChanged: { changes: string[]; project: { trades: Array<{ id: string; name: string }> } } }>(c.client, PROJECT_CHANGED, { ids: [PRJ] });
}

describe('subscribers of two instances on one database', () => {
  it('get the changes written through the other instance', async () => {
    const token = await tokenFor(balancer.url, DEMO_USERS.architect);
    const onB = subscribeOn(b.url, token);
    const onA = subscribeOn(a.url, token);
    await eventually(async () => (await activeOn(b.url)) === 1 && (await activeOn(a.url)) === 1, 'subscribed on both');

    const viaA = await gql(a.url, token, CREATE_TRADE, { p: PRJ, i: { name: 'Serrurerie via A', number: '31', shortName: 'SA' } });
    expect(viaA.body.errors).toBeUndefined();
    const tradeA = { id: viaA.body.data.createProjectTrade.trade.id, name: 'Serrurerie via A' };
    const [seenByB, seenByA] = await Promise.all([onB.next(), onA.next()]);
    expect(seenByB.data!.projectChanged.changes).toEqual(['TRADE']);
    expect(seenByB.data!.projectChanged.project.trades).toContainEqual(tradeA);
    expect(seenByA.data!.projectChanged.project.trades).toContainEqual(tradeA);

    const viaB = await gql(b.url, token, CREATE_TRADE, { p: PRJ, i: { name: 'Serrurerie via B', number: '32', shortName: 'SB' } });
    expect(viaB.body.errors).toBeUndefined();
    const tradeB = { id: viaB.body.data.createProjectTrade.trade.id, name: 'Serrurerie via B' };
    const [againOnB, againOnA] = await Promise.all([onB.next(), onA.next()]);
    expect(againOnA.data!.projectChanged.project.trades).toContainEqual(tradeB);
    expect(againOnB.data!.projectChanged.project.trades).toContainEqual(tradeB);
  });
});
