import { CreditLedgerEntry, Organization, OrganizationKind } from '../entities';
import { DEMO_IDS } from '../../seed/demo-data';
import { formatDay } from '../../platform/values/time';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { tokenFor } from '../../../test/support/auth';
import { request } from '../../../test/support/http';

const PATH = '/api/v1/credits-usage';
const ORG = DEMO_IDS.organizations;
const HQ = DEMO_IDS.headquarter;
const UNKNOWN = '0b7e3c1a-5f7d-4c2e-9a61-3d2f1e0c9b8a';
/** An architect organization of headquarter Groupe Demo where architect@demo.test is not a member. */
const ATELIER_EST = '5d1c7e0a-3b4f-4a8e-9c2d-6e7f8a9b0c1d';
/** An architect organization in no headquarter. */
const ATELIER_OUEST = '7a2b3c4d-5e6f-4a1b-8c9d-0e1f2a3b4c5d';

let t: TestApp;
let architect: string;
let other: string;

/**
 * Ledger entries of 2021, far from the demo entries (the last four months): amounts are powers of two
 * so every total below names exactly the entries it counts.
 */
const LEDGER: Array<[organization: string, at: string, amount: number]> = [
  [ORG.atelierDemo, '2021-03-31T23:59:59.999Z', 1],
  [ORG.atelierDemo, '2021-04-01T00:00:00.000Z', 2],
  [ORG.atelierDemo, '2021-04-15T12:00:00.000Z', 4],
  [ORG.atelierDemo, '2021-04-30T23:59:59.999Z', 8],
  [ORG.atelierDemo, '2021-05-01T00:00:00.000Z', 16],
  [ORG.atelierNord, '2021-04-10T10:00:00.000Z', 32],
  [ORG.atelierNord, '2021-04-20T10:00:00.000Z', 64],
  [ATELIER_EST, '2021-04-05T09:00:00.000Z', 128],
  [ATELIER_OUEST, '2021-04-05T09:00:00.000Z', 256],
  [ORG.cabinetSud, '2021-04-12T09:00:00.000Z', 512],
];

beforeAll(async () => {
  t = await startTestApp();
  architect = await tokenFor(t.url, 'architect@demo.test');
  other = await tokenFor(t.url, 'other@demo.test');
  const em = t.orm.em.fork();
  em.create(Organization, { id: ATELIER_EST, name: 'Atelier Est', kind: OrganizationKind.ARCHITECT, headquarter: HQ });
  em.create(Organization, { id: ATELIER_OUEST, name: 'Atelier Ouest', kind: OrganizationKind.ARCHITECT });
  await em.flush();
  for (const [organization, at, amount] of LEDGER) {
    em.create(CreditLedgerEntry, { organization, amount, kind: 'INVITATION', createdAt: new Date(at), updatedAt: new Date(at) });
  }
  await em.flush();
});
afterAll(() => t.close());

const usage = (query: string, token = architect) => request(t.url, 'GET', `${PATH}${query}`, { token });
const demo = { id: ORG.atelierDemo, name: 'Atelier Demo' };

describe('GET /api/v1/credits-usage (#35)', () => {
  it('reports the current organization\'s consumption over the period, both days inclusive', async () => {
    const res = await usage('?from=2021-04-01&to=2021-04-30');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      credits_usage: {
        total: 2 + 4 + 8, from: '2021-04-01', to: '2021-04-30',
        scope: { type: 'organization', ...demo },
        organizations: [{ ...demo, total: 14 }],
      },
    });
  });

  it('counts whole UTC days: the last millisecond of `to` is in, the first of the next day is out', async () => {
    expect((await usage('?from=2021-04-15&to=2021-04-15')).body.credits_usage.total).toBe(4);
    expect((await usage('?from=2021-03-31&to=2021-05-01')).body.credits_usage.total).toBe(1 + 2 + 4 + 8 + 16);
    expect((await usage('?from=2021-04-30&to=2021-04-30')).body.credits_usage.total).toBe(8);
    expect((await usage('?from=2021-06-01&to=2021-06-30')).body.credits_usage).toMatchObject({ total: 0, organizations: [{ ...demo, total: 0 }] });
  });

  it('starts on the first day of the month of `to` when `from` is absent', async () => {
    const res = await usage('?to=2021-04-15');
    expect(res.status).toBe(200);
    expect(res.body.credits_usage).toMatchObject({ from: '2021-04-01', to: '2021-04-15', total: 2 + 4 });
  });

  it('ends today (UTC) when `to` is absent, and starts on the first day of this month when both are absent', async () => {
    const today = formatDay(new Date());
    const firstOfMonth = `${today.slice(0, 8)}01`;
    const both = await usage('');
    expect(both.status).toBe(200);
    expect(both.body.credits_usage).toMatchObject({ from: firstOfMonth, to: today, scope: { type: 'organization', ...demo } });
    const explicit = await usage(`?from=${firstOfMonth}&to=${today}`);
    expect(both.body.credits_usage.total).toBe(explicit.body.credits_usage.total);
    const fromOnly = await usage('?from=2021-04-01');
    expect(fromOnly.body.credits_usage).toMatchObject({ from: '2021-04-01', to: today });
  });

  it('reports the demo credits: one per invitation over the last four months, plus Atelier Nord\'s four extra entries', async () => {
    const now = new Date();
    const first = (monthsBack: number) => formatDay(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - monthsBack, 1)));
    const last = (monthsBack: number) => formatDay(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - monthsBack + 1, 0)));
    const today = formatDay(now);
    // Atelier Demo holds 21 documents (residence 15, school 5, archived house 1); Atelier Nord 3, plus 4 extra entries.
    const window = `?from=${first(3)}&to=${today}`;
    expect((await usage(window)).body.credits_usage.total).toBe(21);
    expect((await usage(`${window}&organization_id=${ORG.atelierNord}`)).body.credits_usage.total).toBe(7);
    const hq = await usage(`${window}&headquarter_id=${HQ}`);
    expect(hq.body.credits_usage.total).toBe(28);
    expect((await usage(window, other)).body.credits_usage.total).toBe(1);
    // The months partition the window.
    const months = await Promise.all([0, 1, 2, 3].map((m) => usage(`?from=${first(m)}&to=${m === 0 ? today : last(m)}`)));
    expect(months.reduce((sum, r) => sum + (r.body.credits_usage.total as number), 0)).toBe(21);
    // Atelier Nord's extra entries are one a month.
    for (const m of [1, 2, 3]) {
      const nord = await usage(`?from=${first(m)}&to=${last(m)}&organization_id=${ORG.atelierNord}`);
      expect(nord.body.credits_usage.total).toBeGreaterThanOrEqual(1);
    }
  });

  it('reports another organization where the caller is Administrator with organization_id', async () => {
    const res = await usage(`?from=2021-04-01&to=2021-04-30&organization_id=${ORG.atelierNord}`);
    expect(res.status).toBe(200);
    expect(res.body.credits_usage).toEqual({
      total: 32 + 64, from: '2021-04-01', to: '2021-04-30',
      scope: { type: 'organization', id: ORG.atelierNord, name: 'Atelier Nord' },
      organizations: [{ id: ORG.atelierNord, name: 'Atelier Nord', total: 96 }],
    });
  });

  it('reports an organization of a headquarter the caller administers, though not a member of it', async () => {
    const res = await usage(`?from=2021-04-01&to=2021-04-30&organization_id=${ATELIER_EST.toUpperCase()}`);
    expect(res.status).toBe(200);
    expect(res.body.credits_usage).toMatchObject({ total: 128, scope: { type: 'organization', id: ATELIER_EST, name: 'Atelier Est' } });
  });

  it('aggregates every member organization of a headquarter with headquarter_id', async () => {
    const res = await usage(`?from=2021-04-01&to=2021-04-30&headquarter_id=${HQ}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      credits_usage: {
        total: 14 + 128 + 96, from: '2021-04-01', to: '2021-04-30',
        scope: { type: 'headquarter', id: HQ, name: 'Groupe Demo' },
        organizations: [
          { ...demo, total: 14 },
          { id: ATELIER_EST, name: 'Atelier Est', total: 128 },
          { id: ORG.atelierNord, name: 'Atelier Nord', total: 96 },
        ],
      },
    });
  });

  it('never counts another organization\'s credits in the caller\'s report', async () => {
    const theirs = await usage('?from=2021-04-01&to=2021-04-30', other);
    expect(theirs.body.credits_usage).toEqual({
      total: 512, from: '2021-04-01', to: '2021-04-30',
      scope: { type: 'organization', id: ORG.cabinetSud, name: 'Cabinet Sud' },
      organizations: [{ id: ORG.cabinetSud, name: 'Cabinet Sud', total: 512 }],
    });
  });

  it('answers 403 for an organization the caller may not report on, whether it exists or not', async () => {
    for (const [id, token] of [[ORG.cabinetSud, architect], [ATELIER_OUEST, architect], [UNKNOWN, architect], [ORG.atelierDemo, other], [ATELIER_EST, other]] as const) {
      const res = await usage(`?organization_id=${id}`, token);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ code: 403, message: 'You may not report on this organization' });
    }
  });

  it('answers 403 for a headquarter the caller does not administer, whether it exists or not', async () => {
    for (const [id, token] of [[HQ, other], [UNKNOWN, architect]] as const) {
      const res = await usage(`?headquarter_id=${id}`, token);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ code: 403, message: 'You may not report on this headquarter' });
    }
  });

  it('answers 400 when organization_id and headquarter_id are combined', async () => {
    const res = await usage(`?organization_id=${ORG.atelierDemo}&headquarter_id=${HQ}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, message: 'The request is not valid', errors: [{ field: 'headquarter_id', message: 'cannot be combined with organization_id' }] });
  });

  it('answers 400 when `from` is after `to`, given or defaulted', async () => {
    const res = await usage('?from=2021-04-02&to=2021-04-01');
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'from', message: 'must not be after to' }]);
    const future = await usage('?from=2999-01-01');
    expect(future.status).toBe(400);
    expect(future.body.errors).toEqual([{ field: 'from', message: 'must not be after to' }]);
  });

  it('answers 400 for a date that is not a real YYYY-MM-DD day', async () => {
    for (const [query, field] of [
      ['?from=2021-4-01', 'from'], ['?to=01/04/2021', 'to'], ['?to=2021-02-30', 'to'], ['?from=2021-04-01T00:00:00', 'from'], ['?to=', 'to'],
    ]) {
      const res = await usage(query);
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([{ field, message: 'must be a date written YYYY-MM-DD' }]);
    }
  });

  it('answers 400 for ids that are not UUIDs and for parameters the operation does not accept', async () => {
    const ids = await usage('?organization_id=12&headquarter_id=x');
    expect(ids.status).toBe(400);
    expect(ids.body.errors).toEqual([
      { field: 'organization_id', message: 'must be a UUID' },
      { field: 'headquarter_id', message: 'must be a UUID' },
    ]);
    const unknown = await usage('?month=2021-04');
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toEqual([{ field: 'month', message: 'is not accepted by this operation' }]);
  });

  it('sums in one statement whatever the number of entries', async () => {
    const measured = await t.queries.measure(() => usage(`?from=2021-01-01&to=2021-12-31&headquarter_id=${HQ}`));
    expect(measured.result.status).toBe(200);
    expect(measured.sql.filter((s) => s.includes('credit_ledger_entry'))).toHaveLength(1);
  });

  it('answers 401 without a token', async () => {
    const res = await request(t.url, 'GET', PATH);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe(401);
  });
});
