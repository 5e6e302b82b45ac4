import 'reflect-metadata';
import { MikroORM } from '@mikro-orm/postgresql';
import { ormConfig } from '../mikro-orm.config';
import { DEMO_IDS, DEMO_SIRETS, loadDemoData } from '../src/seed/demo-data';
import { verifyPassword } from '../src/modules/identity/password';
import { normalizeKey } from '../src/platform/values/text';
import { freshDatabase } from './support/app';

// The run's template database was seeded once by the global setup; this file works on a copy of it.
let orm: MikroORM;
let drop: () => Promise<void>;
const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) => orm.em.fork().getConnection().execute<T[]>(text, params);
const count = async (text: string, params: unknown[] = []) => Number((await sql<{ n: string }>(text, params))[0].n);

beforeAll(async () => {
  const db = await freshDatabase('seed');
  drop = db.drop;
  orm = await MikroORM.init(ormConfig(db.url));
});
afterAll(async () => {
  await orm.close(true);
  await drop();
});

describe('demo data (decisions.md section 3)', () => {
  it('loads once: a second load changes nothing', async () => {
    const tables = (await sql<{ tablename: string }>(`select tablename from pg_tables where schemaname = 'public' and tablename <> 'mikro_orm_migrations'`)).map((r) => r.tablename);
    const snapshot = async () => Object.fromEntries(await Promise.all(tables.map(async (t) => [t, await count(`select count(*) as n from "${t}"`)])));
    const before = await snapshot();
    expect(await loadDemoData(orm.em.fork())).toBe(false);
    expect(await snapshot()).toEqual(before);
    expect(before.project).toBeGreaterThan(0);
  });

  it('has the four accounts with the demo password and the promised rights', async () => {
    const users = await sql<{ email: string; password_hash: string; api_enabled: boolean; current: string | null }>(
      `select email, password_hash, api_enabled, current_organization_id as current from app_user where email like '%@demo.test' order by email`);
    expect(users.map((u) => u.email)).toEqual(['architect@demo.test', 'member@demo.test', 'noapi@demo.test', 'other@demo.test']);
    for (const u of users) expect(await verifyPassword('demo-password', u.password_hash)).toBe(true);
    const roles = await sql<{ email: string; org: string; role: string }>(`
      select u.email, o.name as org, m.role from membership m join app_user u on u.id = m.user_id join organization o on o.id = m.organization_id
      where u.email like '%@demo.test' order by u.email, o.name`);
    expect(roles).toEqual([
      { email: 'architect@demo.test', org: 'Atelier Demo', role: 'ADMINISTRATOR' },
      { email: 'architect@demo.test', org: 'Atelier Nord', role: 'ADMINISTRATOR' },
      { email: 'member@demo.test', org: 'Atelier Demo', role: 'MEMBER' },
      { email: 'noapi@demo.test', org: 'Atelier Demo', role: 'ADMINISTRATOR' },
      { email: 'other@demo.test', org: 'Cabinet Sud', role: 'ADMINISTRATOR' },
    ]);
    expect(users.find((u) => u.email === 'noapi@demo.test')!.api_enabled).toBe(false);
    expect(users.find((u) => u.email === 'architect@demo.test')!.current).toBe(DEMO_IDS.organizations.atelierDemo);
  });

  it('puts Atelier Demo and Atelier Nord in headquarter "Groupe Demo", administered by architect', async () => {
    const rows = await sql<{ hq: string; org: string }>(`select h.name as hq, o.name as org from organization o join headquarter h on h.id = o.headquarter_id order by o.name`);
    expect(rows).toEqual([{ hq: 'Groupe Demo', org: 'Atelier Demo' }, { hq: 'Groupe Demo', org: 'Atelier Nord' }]);
    expect(await count(`select count(*) as n from headquarter_admin ha join app_user u on u.id = ha.user_id where u.email = 'architect@demo.test'`)).toBe(1);
  });

  it('gives Atelier Demo two live projects with trades, a sliced template, answers with versions and files', async () => {
    const org = DEMO_IDS.organizations.atelierDemo;
    expect(await count(`select count(*) as n from project where organization_id = ? and archived_at is null`, [org])).toBeGreaterThanOrEqual(2);
    expect(await count(`select count(distinct p.id) as n from project p join project_trade t on t.project_id = p.id where p.organization_id = ?`, [org])).toBeGreaterThanOrEqual(2);
    expect(await count(`select count(*) as n from template t join project p on p.id = t.project_id where p.organization_id = ? and t.parent_id is not null`, [org])).toBeGreaterThanOrEqual(2);
    const states = await sql<{ status: string }>(`
      select distinct v.status from document_version v join document d on d.id = v.document_id join template t on t.id = d.template_id
      join project p on p.id = t.project_id where p.organization_id = ?`, [org]);
    expect(states.map((s) => s.status).sort()).toEqual(['ANSWERED', 'DECLINED', 'DRAFT', 'IN_REVISION']);
    expect(await count(`
      select count(*) as n from document_file f join document_version v on v.id = f.version_id join document d on d.id = v.document_id
      join template t on t.id = d.template_id join project p on p.id = t.project_id where p.organization_id = ? and v.status = 'ANSWERED'`, [org])).toBeGreaterThan(0);
    expect(await count(`select count(*) as n from document d join template t on t.id = d.template_id join project p on p.id = t.project_id where p.organization_id = ? and d.dce_downloaded_at is not null`, [org])).toBeGreaterThan(0);
    expect(await count(`select count(*) as n from document d join template t on t.id = d.template_id join project p on p.id = t.project_id where p.organization_id = ? and d.intention = 'NO'`, [org])).toBeGreaterThan(0);
  });

  it('has contractor companies sharing SIRET 73282932000074, and one with 55210055400013', async () => {
    expect(await count(`select count(*) as n from organization where kind = 'CONTRACTOR' and fiscal_number = ?`, [DEMO_SIRETS.shared])).toBe(2);
    expect(await count(`select count(*) as n from organization where kind = 'CONTRACTOR' and fiscal_number = ?`, [DEMO_SIRETS.single])).toBe(1);
  });

  it('gives Cabinet Sud a project of its own', async () => {
    expect(await count(`select count(*) as n from project where organization_id = ?`, [DEMO_IDS.organizations.cabinetSud])).toBeGreaterThanOrEqual(1);
  });

  it('spreads credits consumption over the last months, never in the future', async () => {
    const months = await count(`select count(distinct date_trunc('month', created_at)) as n from credit_ledger_entry`);
    expect(months).toBeGreaterThanOrEqual(3);
    expect(await count(`select count(*) as n from credit_ledger_entry where created_at > now()`)).toBe(0);
  });

  it('maps the trade names and service ids of the demo trade lists, and partner ids 1001 and 1002', async () => {
    const trades = await sql<{ id: string; name: string }>(`select id, name from trade_list_trade`);
    const keys = new Set((await sql<{ k: string }>(`select source || ':' || key as k from trade_category_mapping`)).map((r) => r.k));
    for (const t of trades) {
      expect(keys).toContain(`NAME:${normalizeKey(t.name)}`);
      expect(keys).toContain(`SVC:${t.id}`);
    }
    expect(keys).toContain('PARTNER:1001');
    expect(keys).toContain('PARTNER:1002');
  });
});
