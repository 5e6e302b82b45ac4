import 'reflect-metadata';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { demoToken, withScratchDatabase } from './support';
import { createApp, listen } from '../src/app';
import { loadConfig } from '../src/platform/config';
import { createLogger } from '../src/platform/logger';
import { DEMO_IDS } from '../src/seed/demo-data';

/**
 * Bytes on the wire with and without compression (src/platform/http/caching.ts) for the largest answers: the OpenAPI
 * document, the reference page's script, and the largest REST and GraphQL answers on the demo data (the
 * largest of a list of candidates, found by fetching them all). For each, ROUNDS sequential requests per
 * coding give the median time to the last byte, which includes the compression itself.
 */

const ROUNDS = 30;
const P = '/api/svc/v1';
const { projects: PRJ, templates: TPL, tradeLists: TL } = DEMO_IDS;

const REST_CANDIDATES = [
  `${P}/projects`, `${P}/projects/${PRJ.residence}`, `${P}/projects/${PRJ.residence}/templates`,
  `${P}/projects/${PRJ.residence}/templates/documents`, `${P}/projects/${PRJ.residence}/templates/${TPL.residenceGrosOeuvre}`,
  `${P}/projects/${PRJ.residence}/statistics`, `${P}/projects/${PRJ.residence}/trades`, `${P}/organizations`,
  `${P}/trades/list`, `${P}/trades/list/${TL.standard}`, '/api/v1/credits-usage',
];

/** A dashboard: every project with its trades, templates, documents, contractors and versions. */
const GRAPHQL_CANDIDATES = [
  '{ projects(first: 100) { nodes { id name constructionType responseType endOfOfferDate archived createdAt updatedAt '
    + 'trades { id } templates { id isSlice slice closedAt versionSaved createdAt updatedAt '
    + 'documents { id intention state dceDownloadedAt contractor { id name email phone } versions { version subTotal } } } } } }',
  '{ organizations { id name } me { id email organizationIds } tradeLists { id name organizationId createdAt updatedAt } }',
];

interface Answer { status: number; bytes: number; ms: number }

function fetchRaw(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string }): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: opts.method ?? 'GET', headers: opts.headers, agent: false }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => { bytes += c.length; });
      res.on('end', () => resolve({ status: res.statusCode!, bytes, ms: performance.now() - started }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;

export async function run(): Promise<void> {
  await withScratchDatabase('compression', 10, async (orm, url) => {
    const config = loadConfig({ NODE_ENV: 'test', PORT: '0', DATABASE_URL: url, RATE_LIMIT_STORE: 'memory', RATE_LIMIT_API_POINTS: '1000000' });
    const app = await createApp({ config, orm, log: createLogger({ logLevel: 'silent' }) });
    const server = await listen(app, '127.0.0.1', 0);
    config.publicUrl = server.url;
    config.auth.issuer = server.url;
    try {
      const token = await demoToken(server.url, 'svc email profile');
      const auth = { Authorization: `Bearer ${token}` };
      type Target = { label: string; path: string; method?: string; headers?: Record<string, string>; body?: string };
      const largest = async (targets: Target[]) => {
        let best: (Target & { bytes: number }) | null = null;
        for (const target of targets) {
          const a = await fetchRaw(server.url + target.path, target);
          if (a.status !== 200) throw new Error(`${target.path}: ${a.status}`);
          if (!best || a.bytes > best.bytes) best = { ...target, bytes: a.bytes };
        }
        return best!;
      };
      const rest = await largest(REST_CANDIDATES.map((path) => ({ label: `REST ${path}`, path, headers: auth })));
      const graphql = await largest(GRAPHQL_CANDIDATES.map((query, i) => ({
        label: `GraphQL query ${i + 1}`, path: '/graphql', method: 'POST',
        headers: { ...auth, 'Content-Type': 'application/json' }, body: JSON.stringify({ query }),
      })));
      const targets: Target[] = [
        { label: 'OpenAPI document', path: `${P}/openapi.json` },
        { label: 'reference page script', path: `${P}/docs/swagger-ui-bundle.js` },
        rest,
        graphql,
      ];
      console.log('| answer | identity | gzip | br | saved (br) | time identity / gzip / br (median) |');
      console.log('|---|---|---|---|---|---|');
      for (const target of targets) {
        const sizes: Record<string, number> = {};
        const times: Record<string, number> = {};
        for (const coding of ['identity', 'gzip', 'br']) {
          const ms: number[] = [];
          for (let i = 0; i < ROUNDS; i++) {
            const a = await fetchRaw(server.url + target.path, { ...target, headers: { ...target.headers, 'Accept-Encoding': coding } });
            sizes[coding] = a.bytes;
            ms.push(a.ms);
          }
          times[coding] = median(ms);
        }
        const saved = sizes.identity - sizes.br;
        console.log(`| ${target.label} | ${kib(sizes.identity)} | ${kib(sizes.gzip)} | ${kib(sizes.br)} | ${kib(saved)} (${Math.round((saved / sizes.identity) * 100)} %) | ${times.identity.toFixed(1)} / ${times.gzip.toFixed(1)} / ${times.br.toFixed(1)} ms |`);
      }
    } finally {
      await server.close();
      await app.stop();
    }
  });
}
