import { ValidationError } from '../src/platform/errors/errors';
import { decodeCursor, encodeCursor, keysetPage, type KeysetQuery, type Page } from '../src/platform/database/pagination';
import { rowTime, type PgTimestamp } from '../src/platform/database/rows';
import type { Time } from '../src/platform/values/time';
import { startTestApp, type TestApp } from './support/app';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

interface Row { id: string; created_at: PgTimestamp }
interface Item { id: string; createdAt: Time }

/** Every project of the database, as a list to page through. */
const PROJECTS: KeysetQuery<Row, Item> = {
  columns: 'p.id, p.created_at',
  from: 'project p',
  alias: 'p',
  where: 'p.name <> ?',
  params: [''],
  map: (r) => ({ id: r.id, createdAt: rowTime(r.created_at!) }),
};

/** What knex sent and answered while `fn` ran: each statement's text, connection, and the order of the events. */
async function traced<T>(fn: () => Promise<T>): Promise<{ result: T; events: Array<{ event: 'sent' | 'answered' | 'failed'; sql: string; connection: string }> }> {
  const knex = t.orm.em.getKnex();
  const events: Array<{ event: 'sent' | 'answered' | 'failed'; sql: string; connection: string }> = [];
  type Q = { sql: string; __knexUid?: string };
  const sent = (q: Q) => events.push({ event: 'sent', sql: q.sql, connection: String(q.__knexUid) });
  const answered = (_: unknown, q: Q) => events.push({ event: 'answered', sql: q.sql, connection: String(q.__knexUid) });
  const failed = (_: unknown, q: Q) => events.push({ event: 'failed', sql: q.sql, connection: String(q.__knexUid) });
  knex.on('query', sent).on('query-response', answered).on('query-error', failed);
  try {
    return { result: await fn(), events };
  } finally {
    knex.off('query', sent).off('query-response', answered).off('query-error', failed);
  }
}

/** The whole list, unpaged, newest first: what the pages must add up to. */
async function everyProject(): Promise<Item[]> {
  return (await keysetPage(t.orm.em.fork(), PROJECTS, { order: 'desc', count: true })).items;
}

describe('keysetPage', () => {
  it('sends the count and the page at once, each on a connection of its own', async () => {
    // Two connections of the pool made beforehand, and statements that each take 300 ms: sent one after the other,
    // the second would be sent after the first's answer.
    await Promise.all([1, 2].map(() => t.orm.em.fork().execute('select 1')));
    const slow: KeysetQuery<Row, Item> = { ...PROJECTS, where: `${PROJECTS.where} and (select pg_sleep(0.3)) is not null` };
    const { result, events } = await traced(() => keysetPage(t.orm.em.fork(), slow, { first: 2, order: 'desc', count: true }));
    const count = events.find((e) => e.event === 'sent' && /^select count\(\*\)/.test(e.sql))!;
    const page = events.find((e) => e.event === 'sent' && /order by p\.created_at desc/.test(e.sql))!;
    expect(count).toBeDefined();
    expect(page).toBeDefined();
    expect(events.filter((e) => e.event === 'sent')).toHaveLength(2);
    // Both sent before either answered.
    expect(events.slice(0, 2).map((e) => e.event)).toEqual(['sent', 'sent']);
    expect(page.connection).not.toBe(count.connection);
    expect(result.items).toHaveLength(2);
    expect(result.totalCount).toBe((await everyProject()).length);
  });

  it('answers the same pages, count and cursors as the whole list, in both orders', async () => {
    const all = await everyProject();
    expect(all.length).toBeGreaterThan(3);
    for (const order of ['desc', 'asc'] as const) {
      const expected = order === 'desc' ? all : [...all].reverse();
      const seen: Item[] = [];
      let after: string | null = null;
      for (;;) {
        const page: Page<Item> = await keysetPage(t.orm.em.fork(), PROJECTS, { first: 2, after, order, count: true });
        expect(page.totalCount).toBe(all.length);
        seen.push(...page.items);
        const last = page.items[page.items.length - 1];
        expect(page.endCursor).toBe(last ? encodeCursor(last.createdAt, last.id) : null);
        expect(page.hasNextPage).toBe(seen.length < all.length);
        if (!page.hasNextPage) break;
        after = page.endCursor;
      }
      expect(seen.map((p) => p.id)).toEqual(expected.map((p) => p.id));
    }
  });

  it('sends no count when not asked for, or when unpaged (the count is the page\'s)', async () => {
    const uncounted = await traced(() => keysetPage(t.orm.em.fork(), PROJECTS, { first: 2, order: 'desc', count: false }));
    expect(uncounted.result.totalCount).toBeNull();
    expect(uncounted.events.filter((e) => e.event === 'sent')).toHaveLength(1);
    const unpaged = await traced(() => keysetPage(t.orm.em.fork(), PROJECTS, { order: 'desc', count: true }));
    expect(unpaged.result.totalCount).toBe(unpaged.result.items.length);
    expect(unpaged.events.filter((e) => e.event === 'sent')).toHaveLength(1);
  });

  it('refuses a cursor it did not write before sending anything', async () => {
    const { result, events } = await traced(() => keysetPage(t.orm.em.fork(), PROJECTS, { first: 2, after: 'not-a-cursor', afterField: 'after', order: 'desc', count: true })
      .then(() => null, (err: unknown) => err));
    expect(result).toBeInstanceOf(ValidationError);
    expect(events).toEqual([]);
  });

  it('throws the failed statement\'s error once both have settled', async () => {
    // The page orders by the alias's columns, which this FROM does not have: the page fails, the count does not.
    const broken: KeysetQuery<Row, Item> = { ...PROJECTS, alias: 'missing' };
    const { result, events } = await traced(() => keysetPage(t.orm.em.fork(), broken, { first: 2, order: 'desc', count: true })
      .then(() => null, (err: unknown) => err));
    expect(String(result)).toMatch(/missing/);
    expect(events.filter((e) => e.event === 'sent')).toHaveLength(2);
    expect(events.filter((e) => e.event !== 'sent')).toHaveLength(2);
  });

  it('pages inside a transaction too, both statements on its connection', async () => {
    const all = await everyProject();
    const { result, events } = await traced(() => t.orm.em.fork().transactional((em) => keysetPage(em, PROJECTS, { first: 2, order: 'desc', count: true })));
    expect(result.totalCount).toBe(all.length);
    expect(result.items.map((p) => p.id)).toEqual(all.slice(0, 2).map((p) => p.id));
    const statements = events.filter((e) => e.event === 'sent' && !/^(BEGIN|COMMIT|ROLLBACK)\b/i.test(e.sql));
    expect(statements).toHaveLength(2);
    expect(new Set(statements.map((e) => e.connection)).size).toBe(1);
    expect(decodeCursor(result.endCursor!).i).toBe(all[1].id);
  });
});
