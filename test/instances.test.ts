import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { DEMO_IDS, DEMO_PASSWORD, DEMO_USERS } from '../src/seed/demo-data';
import { startTestApp, type TestApp } from './support/app';
import { request } from './support/http';

/**
 * Two instances of the service on one database behind a round-robin balancer with no sticky sessions:
 * instance A runs in this process, instance B is its own process (src/server.ts through swc), so nothing
 * held in memory can be shared between them. The client only knows the balancer, whose URL is both
 * instances' PUBLIC_URL.
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

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

/** src/server.ts in a process of its own, on `databaseUrl`; resolves once it listens. */
async function startProcess(databaseUrl: string, publicUrl: string): Promise<{ url: string; proc: ChildProcess }> {
  const port = await freePort();
  const proc = spawn(process.execPath, ['-r', path.join(__dirname, 'support/swc-register.js'), path.join(__dirname, '../src/server.ts')], {
    env: {
      PATH: process.env.PATH, NODE_ENV: 'test', LOG_LEVEL: 'info', HOST: '127.0.0.1', PORT: String(port), PUBLIC_URL: publicUrl,
      DATABASE_URL: databaseUrl, RATE_LIMIT_API_POINTS: '1000000', RATE_LIMIT_TOKEN_POINTS: '1000000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output.push(chunk.toString());
      if (/"msg":"listening"/.test(output.join(''))) resolve();
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    proc.once('exit', (code) => reject(new Error(`instance B exited (${code}) before listening:\n${output.join('')}`)));
  });
  return { url: `http://127.0.0.1:${port}`, proc };
}

let balancer: Balancer;
let a: TestApp;
let b: { url: string; proc: ChildProcess };

beforeAll(async () => {
  balancer = await roundRobin();
  a = await startTestApp({ PUBLIC_URL: balancer.url });
  b = await startProcess(a.databaseUrl, balancer.url);
  balancer.backends.push(a.url, b.url);
}, 60000);

afterAll(async () => {
  if (b?.proc.exitCode === null) {
    const exited = new Promise((resolve) => b.proc.once('exit', resolve));
    b.proc.kill('SIGTERM');
    await exited;
  }
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
