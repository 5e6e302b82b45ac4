import { Client } from 'pg';
import { DEMO_IDS } from '../../seed/demo-data';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { tokenFor } from '../../../test/support/auth';
import { request } from '../../../test/support/http';

const P = '/api/svc/v1';
let t: TestApp;
let architect: string;

beforeAll(async () => {
  t = await startTestApp();
  architect = await tokenFor(t.url, 'architect@demo.test');
});
afterAll(() => t.close());

/**
 * Starts the service's own archive of the project and keeps it in flight until `commit`: a side transaction
 * holds the project row for share, on which the archive's update waits.
 */
async function pendingArchive(projectId: string) {
  const client = new Client({ connectionString: t.orm.config.get('clientUrl') });
  await client.connect();
  await client.query('begin');
  await client.query('select id from project where id = $1 for share', [projectId]);
  const archive = request(t.url, 'PUT', `${P}/projects/${projectId}/archive`, { token: architect });
  await someoneWaitsOnALock();
  return {
    commit: async () => {
      await client.query('commit');
      await client.end();
      expect((await archive).status).toBe(200);
    },
  };
}

/** Waits until some session of the test database waits on a lock. */
async function someoneWaitsOnALock(): Promise<void> {
  const db = t.orm.em.fork().getConnection();
  for (let i = 0; i < 200; i++) {
    const [row] = await db.execute<{ n: string }[]>("select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'");
    if (Number(row.n) > 0) return;
    await sleep(25);
  }
  throw new Error('nobody waits on a lock');
}

const settled = <T>(p: Promise<T>, ms: number) => Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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

describe('PUT /api/svc/v1/projects/{projectId}/archive (#4) under steady writes', () => {
  const WRITERS = 15;

  it('is answered while 15 writers keep creating trades, after the write in flight, and no write below the project commits after its archived_at', async () => {
    const created = await request(t.url, 'POST', `${P}/projects`, {
      token: architect,
      body: { name: 'Chantier très actif', construction_type: 'public_building', managers: [{ id: DEMO_IDS.users.architect }], trade_list_id: DEMO_IDS.tradeLists.standard, response_type: 'DPGF' },
    });
    expect(created.status).toBe(201);
    const projectId: string = created.body.project.id;
    const tradeId: string = (await request(t.url, 'GET', `${P}/projects/${projectId}/trades`, { token: architect })).body.trades[0].id;

    interface Write { name: string; status: number; sentAt: number }
    const writes: Write[] = [];
    let stopAt = Infinity;
    const writer = async (w: number) => {
      for (let n = 0; Date.now() < stopAt; n++) {
        const name = `w${w}-${n}`;
        const sentAt = Date.now();
        const res = await request(t.url, 'POST', `${P}/projects/${projectId}/trades`, { token: architect, body: { name, number: `${w}.${n}`, short_name: 'W' } });
        writes.push({ name, status: res.status, sentAt });
      }
    };
    const writers = Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
    await sleep(1000); // every writer in full swing

    // A slow write in flight: a template creation that holds the project, parked on its trade's row.
    const side = new Client({ connectionString: t.orm.config.get('clientUrl') });
    await side.connect();
    await side.query('begin');
    await side.query('select id from project_trade where id = $1 for update', [tradeId]);
    const slowWrite = request(t.url, 'POST', `${P}/projects/${projectId}/templates`, { token: architect, body: { trade_id: tradeId } });
    await someoneWaitsOnALock();

    // The writers go on until a second after the archive's answer, or 6 s after it was sent when it starves.
    const archiveSentAt = Date.now();
    stopAt = archiveSentAt + 6000;
    const archive = request(t.url, 'PUT', `${P}/projects/${projectId}/archive`, { token: architect }).then((res) => {
      stopAt = Math.min(stopAt, Date.now() + 1000);
      return { res, answeredAt: Date.now() };
    });
    expect(await settled(archive, 500)).toBe(false); // it waits for the write in flight
    await side.query('commit');
    await side.end();
    expect((await slowWrite).status).toBe(201);
    const { res, answeredAt } = await archive;
    await writers;

    expect(res.status).toBe(200);
    expect(res.body.project.archived).toBe(true);
    // Answered while the writers were still running: writes were sent after the answer, all refused.
    const after = writes.filter((x) => x.sentAt > answeredAt);
    expect(after.length).toBeGreaterThan(0);
    expect(after.filter((x) => x.status !== 409)).toEqual([]);
    expect(writes.filter((x) => x.status !== 201 && x.status !== 409)).toEqual([]);
    expect(writes.filter((x) => x.sentAt < archiveSentAt && x.status === 201).length).toBeGreaterThan(0);

    const db = t.orm.em.fork().getConnection();
    const [late] = await db.execute<{ trades: string; templates: string }[]>(`
      select (select count(*) from project_trade x where x.project_id = p.id and x.created_at > p.archived_at) as trades,
             (select count(*) from template x where x.project_id = p.id and x.created_at > p.archived_at) as templates
      from project p where p.id = ?`, [projectId]);
    expect({ trades: Number(late.trades), templates: Number(late.templates) }).toEqual({ trades: 0, templates: 0 });
    // Every acknowledged write is there; every refused one left nothing.
    const rows = await db.execute<{ name: string }[]>("select name from project_trade where project_id = ? and name like 'w%'", [projectId]);
    const stored = new Set(rows.map((r) => r.name));
    expect(writes.filter((x) => x.status === 201 && !stored.has(x.name))).toEqual([]);
    expect(writes.filter((x) => x.status === 409 && stored.has(x.name))).toEqual([]);
    expect(stored.size).toBe(writes.filter((x) => x.status === 201).length);
  });
});
