import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { print } from 'graphql';
import { DashboardDocument } from '../examples/graphql/generated/graphql';
import { buildDataset } from '../bench/dataset';
import { DEMO_USERS } from '../src/seed/demo-data';
import { freshDatabase, startAppOn, type TestApp } from './support/app';
import { queryRows } from './support/databases';
import { tokenFor } from './support/auth';
import { gql } from './support/graphql';

/**
 * The front end's dashboard answers the same bytes as on 2026-11-29, before the read path was made cheaper
 * (issue 34): every timestamp, amount, order and `extensions.cost` figure of it. The bench's generated data set
 * (bench/dataset.ts: ids and times derived from legacy ids, never random) at 60 projects plus the demo's, read
 * page after page. The golden file holds the hash of each answer and of each project in it, so that a difference
 * names the projects it is in; UPDATE_DASHBOARD_GOLDEN=1 writes it anew (a change of the answer is then a change of
 * the interface, to be said in docs/).
 */
const GOLDEN = path.join(__dirname, 'fixtures', 'dashboard-answer.json');
const PROJECTS = 60;

interface Golden {
  pages: Array<{ bytes: number; sha256: string; projects: Record<string, string> }>;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

let db: Awaited<ReturnType<typeof freshDatabase>>;
let t: TestApp;

beforeAll(async () => {
  db = await freshDatabase('dashboardanswer');
  await buildDataset((sql) => queryRows(db.url, sql) as never, { projects: PROJECTS });
  t = await startAppOn(db.url);
}, 120000);

afterAll(async () => {
  await t?.close();
  await db?.drop();
});

describe('query Dashboard (examples/graphql/dashboard.graphql)', () => {
  it('answers byte for byte what it answered before the read path was made cheaper, page after page', async () => {
    const token = await tokenFor(t.url, DEMO_USERS.architect);
    const document = print(DashboardDocument);
    const pages: Golden['pages'] = [];
    let after: string | null = null;
    let totalCount = 0;
    do {
      const res = await gql(t.url, token, document, { first: 50, after });
      expect(res.status).toBe(200);
      expect(res.body.errors).toBeUndefined();
      const projects: Array<{ id: string }> = res.body.data.projects.nodes;
      totalCount = res.body.data.projects.totalCount;
      pages.push({
        bytes: Buffer.byteLength(res.text),
        sha256: sha256(res.text),
        projects: Object.fromEntries(projects.map((p) => [p.id, sha256(JSON.stringify(p))])),
      });
      after = res.body.data.projects.pageInfo.hasNextPage ? res.body.data.projects.pageInfo.endCursor : null;
    } while (after);
    // The data set's projects and the demo's that the architect sees unarchived: two pages, every project once.
    expect(pages.map((p) => Object.keys(p.projects).length)).toEqual([50, totalCount - 50]);
    expect(totalCount).toBeGreaterThan(PROJECTS);

    if (process.env.UPDATE_DASHBOARD_GOLDEN === '1') writeFileSync(GOLDEN, `${JSON.stringify({ pages }, null, 2)}\n`);
    const golden = JSON.parse(readFileSync(GOLDEN, 'utf8')) as Golden;
    // The projects first: a difference is then named by the projects it is in.
    pages.forEach((page, i) => {
      const differing = Object.keys(page.projects).filter((id) => page.projects[id] !== golden.pages[i].projects[id]);
      expect({ page: i + 1, differing }).toEqual({ page: i + 1, differing: [] });
    });
    expect(pages).toEqual(golden.pages);
  });
});
