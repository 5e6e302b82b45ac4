import { Client } from 'pg';
import { DEMO_IDS } from '../src/seed/demo-data';
import { startTestApp, type TestApp } from './support/app';
import { tokenFor } from './support/auth';
import { request } from './support/http';

const P = '/api/svc/v1';
let t: TestApp;
let architect: string;

beforeAll(async () => {
  t = await startTestApp();
  architect = await tokenFor(t.url, 'architect@demo.test');
});
afterAll(() => t.close());

/** Starts an archive of the project in a transaction of its own that stays open until `commit`. */
async function pendingArchive(projectId: string) {
  const client = new Client({ connectionString: t.orm.config.get('clientUrl') });
  await client.connect();
  await client.query('begin');
  await client.query('update project set archived_at = now() where id = $1', [projectId]);
  return { commit: async () => { await client.query('commit'); await client.end(); } };
}

const settled = <T>(p: Promise<T>, ms: number) => Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

describe('PUT /api/svc/v1/projects/{projectId}/archive (#4) against concurrent writes', () => {
  it('a write that starts while an archive is in flight waits for it, then is refused (409)', async () => {
    const projectId = DEMO_IDS.projects.school;
    const archive = await pendingArchive(projectId);
    const write = request(t.url, 'POST', `${P}/projects/${projectId}/trades`, { token: architect, body: { name: 'Serrurerie', number: '09', short_name: 'SER' } });
    expect(await settled(write, 300)).toBe(false);
    await archive.commit();
    const res = await write;
    expect(res.status).toBe(409);
    const trades = await request(t.url, 'GET', `${P}/projects/${projectId}/trades`, { token: architect });
    expect(trades.body.trades.map((x: { name: string }) => x.name)).not.toContain('Serrurerie');
  });

  it('an invitation racing an archive consumes no credit', async () => {
    const projectId = DEMO_IDS.projects.residence;
    const credits = async () => Number((await t.orm.em.fork().getConnection().execute<{ n: string }[]>('select count(*) as n from credit_ledger_entry'))[0].n);
    const before = await credits();
    const archive = await pendingArchive(projectId);
    const invite = request(t.url, 'POST', `${P}/projects/${projectId}/templates/${DEMO_IDS.templates.residencePlomberie}/contractors`, {
      token: architect, body: { contractors: [{ name: 'Racing SARL', email: 'race@example.test' }] },
    });
    expect(await settled(invite, 300)).toBe(false);
    await archive.commit();
    expect((await invite).status).toBe(409);
    expect(await credits()).toBe(before);
  });
});
