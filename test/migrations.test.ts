import 'reflect-metadata';
import pg from 'pg';
import { MikroORM } from '@mikro-orm/postgresql';
import { ormConfig } from '../mikro-orm.config';
import { CHANGE_CHANNEL } from '../src/platform/events/change-event';
import { MIGRATIONS } from '../src/migrations';
import { loadDemoData } from '../src/seed/demo-data';
import { createDatabaseFrom, dropDatabase } from './support/databases';

const serverUrl = () => process.env.TEST_SERVER_URL!;

/** An empty database of its own for the describe block that calls this, dropped after it; `orm()` once created. */
function emptyDatabase(label: string) {
  const name = `${process.env.TEST_RUN_PREFIX}${label}_${process.pid}`;
  let orm: MikroORM;
  beforeAll(async () => {
    // template0 is PostgreSQL's pristine empty database.
    const url = await createDatabaseFrom(serverUrl(), 'template0', name);
    orm = await MikroORM.init(ormConfig(url));
  });
  afterAll(async () => {
    await orm?.close(true);
    await dropDatabase(serverUrl(), name);
  });
  return {
    orm: () => orm,
    sql: <T>(text: string) => orm.em.fork().getConnection().execute<T[]>(text),
  };
}

describe('migrations', () => {
  const { orm, sql } = emptyDatabase('empty');

  it('build the whole schema from an empty database', async () => {
    const applied = await orm().getMigrator().up();
    expect(applied.map((m) => m.name)).toEqual(MIGRATIONS.map((m) => m.name));
    const tables = await sql<{ table_name: string }>(
      `select table_name from information_schema.tables where table_schema = 'public' order by 1`,
    );
    expect(tables.map((t) => t.table_name)).toEqual(expect.arrayContaining([
      'organization', 'headquarter', 'app_user', 'membership', 'project', 'project_manager', 'project_trade',
      'trade_list', 'trade_list_trade', 'template', 'contractor', 'document', 'document_version', 'document_file',
      'credit_ledger_entry', 'partner_role', 'user_partner_role', 'trade_category', 'trade_category_mapping',
      'signing_key', 'auth_session', 'refresh_token',
    ]));
  });

  it('leave no difference between the entities and the schema', async () => {
    await orm().getMigrator().up();
    const diff = await orm().getSchemaGenerator().getUpdateSchemaSQL({ wrap: false });
    expect(diff.trim()).toBe('');
  });

  it('index every foreign key column', async () => {
    await orm().getMigrator().up();
    const unindexed = await sql<{ tbl: string; col: string }>(`
      select c.conrelid::regclass::text as tbl, a.attname as col
      from pg_constraint c
      join pg_attribute a on a.attrelid = c.conrelid and a.attnum = c.conkey[1]
      where c.contype = 'f' and array_length(c.conkey, 1) = 1
        and not exists (select 1 from pg_index i where i.indrelid = c.conrelid and i.indkey[0] = c.conkey[1])`);
    expect(unindexed).toEqual([]);
  });

  it('store money as numeric(14,2) and times as timestamptz', async () => {
    await orm().getMigrator().up();
    const cols = await sql<{ table_name: string; column_name: string; data_type: string; numeric_precision: number; numeric_scale: number }>(
      `select table_name, column_name, data_type, numeric_precision, numeric_scale from information_schema.columns
       where table_schema = 'public' and (data_type in ('numeric', 'timestamp without time zone') or column_name in ('budget', 'sub_total', 'discount'))`,
    );
    expect(cols.length).toBeGreaterThanOrEqual(3);
    for (const c of cols) expect([c.column_name, c.data_type, c.numeric_precision, c.numeric_scale]).toEqual([c.column_name, 'numeric', 14, 2]);
  });
});

describe('Migration20270120000000_version_template', () => {
  const { orm, sql } = emptyDatabase('version_template');

  it('gives every existing version its document\'s template without telling live dashboards of any change', async () => {
    await orm().getMigrator().up({ to: 'Migration20270110000000_caller_truncate' });
    // The demo data as a database before the migration holds it: the entities already map the column.
    await sql('alter table document_version add column template_id uuid');
    await loadDemoData(orm().em.fork());
    await sql('alter table document_version drop column template_id');
    const listener = new pg.Client({ connectionString: orm().config.getClientUrl() });
    const notifications: string[] = [];
    await listener.connect();
    try {
      listener.on('notification', (n) => notifications.push(n.channel));
      await listener.query(`listen ${CHANGE_CHANNEL}`);
      await orm().getMigrator().up();
      // A notification is delivered once its transaction commits; one more round trip lets any arrive.
      await listener.query('select 1');
    } finally {
      await listener.end();
    }
    expect(notifications).toEqual([]);
    const [counts] = await sql<{ versions: number; wrong: number }>(`select count(*)::int as versions,
      count(*) filter (where v.template_id is distinct from d.template_id)::int as wrong
      from document_version v join document d on d.id = v.document_id`);
    expect(counts.versions).toBeGreaterThan(0);
    expect(counts.wrong).toBe(0);
    const disabled = await sql<{ tgname: string }>(`select tgname from pg_trigger
      where tgrelid = 'document_version'::regclass and not tgisinternal and tgenabled = 'D'`);
    expect(disabled).toEqual([]);
  });
});
