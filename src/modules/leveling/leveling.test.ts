import ExcelJS from 'exceljs';
import { parse } from 'csv-parse/sync';
import { Intention, VersionStatus } from '../entities';
import { DEMO_IDS } from '../../seed/demo-data';
import { ABNORMALLY_LOW_FILL, LOT_COLUMNS, LOT_HEADER_ROW, LOWEST_FILL, SUMMARY_HEADER_ROW, SUMMARY_SHEET } from './leveling-spreadsheet';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { tokenFor } from '../../../test/support/auth';
import { gql } from '../../../test/support/graphql';
import { rawRequest, request } from '../../../test/support/http';
import { SENT_AT, createProject, fillProject, type MainTemplateSpec } from '../../../test/support/tender-builder';

const { ANSWERED, IN_REVISION, DECLINED } = VersionStatus;
const { YES, NO, MAYBE } = Intention;
const P = '/api/svc/v1';
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

let t: TestApp;
let architect: string;
let other: string;
let projectId: string;
let emptyProjectId: string;
let ids: Record<string, string>;

/**
 * The crafted project, every figure below worked out by hand from it.
 *
 * Lot A (trade 01, budget 100,000.00), no selection. Offers, sorted: Delta 60,000.00; Alpha 90,000 - 1,000 =
 * 89,000.00 (its latest ANSWERED version, v2); Bravo 89,500 - 500 = 89,000.00 (a tie with Alpha); Hotel
 * 95,000.00; Charlie 104,000.00 (v1: its v2 is IN_REVISION, which is its state); Golf 110,000.01. Six offers:
 * ranks 1, 2, 2, 4, 5, 6; median (89,000 + 95,000) / 2 = 92,000; mean 547,000.01 / 6 = 91,166.668... →
 * 91,166.67; spread 50,000.01, 83.33335 % of the lowest → 83.33. Abnormally low at 20 %: below 92,000 x 0.8
 * = 73,600: Delta only. Echo (no version, MAYBE) and Foxtrot (DECLINED, NO) have no offer.
 *
 * Slice "Tranche 1" of lot A (budget 0): Alpha and Bravo both 1,000.00: all offers equal, every percent
 * against the budget 0.
 *
 * Lot B (trade 02, budget 50,000.00), Kilo selected. India 40,000.00, Juliet 40,000.01, Kilo 45,000.00, Lima
 * 52,000.00: median (40,000.01 + 45,000) / 2 = 42,500.005 → 42,500.01 (half away from zero); mean
 * 177,000.01 / 4 = 44,250.0025 → 44,250.00; retained Kilo (selected), not the lowest India.
 *
 * Lot C (trade 03, budget 30,000.00), Mike selected but DECLINED: November 31,000.00 is the one offer,
 * retained as the lowest.
 *
 * Lot D (trade 04, budget 20,000.00): Oscar invited, no answer: a lot with no offer.
 */
const CRAFTED: MainTemplateSpec[] = [
  {
    key: 'A', trade: '01', budget: 100000,
    documents: [
      { key: 'alpha', contractor: 'Alpha', intention: YES, versions: [{ status: ANSWERED, subTotal: 95000 }, { status: ANSWERED, subTotal: 90000, discount: 1000 }] },
      { key: 'bravo', contractor: 'Bravo', intention: YES, versions: [{ status: ANSWERED, subTotal: 89500, discount: 500 }] },
      { key: 'charlie', contractor: 'Charlie', intention: YES, versions: [{ status: ANSWERED, subTotal: 104000 }, { status: IN_REVISION, subTotal: 99000 }] },
      { key: 'delta', contractor: 'Delta', intention: YES, versions: [{ status: ANSWERED, subTotal: 60000 }] },
      { key: 'echo', contractor: 'Echo', intention: MAYBE },
      { key: 'foxtrot', contractor: 'Foxtrot', intention: NO, versions: [{ status: DECLINED, subTotal: 0 }] },
      { key: 'golf', contractor: 'Golf', versions: [{ status: ANSWERED, subTotal: 110000.01 }] },
      { key: 'hotel', contractor: 'Hotel', versions: [{ status: ANSWERED, subTotal: 95000 }] },
    ],
    slices: [
      {
        key: 'Tranche 1', budget: 0,
        documents: [
          { key: 'alphaSlice', contractor: 'Alpha', versions: [{ status: ANSWERED, subTotal: 1000 }] },
          { key: 'bravoSlice', contractor: 'Bravo', versions: [{ status: ANSWERED, subTotal: 1200, discount: 200 }] },
        ],
      },
    ],
  },
  {
    key: 'B', trade: '02', budget: 50000, selected: 'kilo',
    documents: [
      { key: 'india', contractor: 'India', versions: [{ status: ANSWERED, subTotal: 40000 }] },
      { key: 'juliet', contractor: 'Juliet', versions: [{ status: ANSWERED, subTotal: 40000.01 }] },
      { key: 'kilo', contractor: 'Kilo', versions: [{ status: ANSWERED, subTotal: 45000 }] },
      { key: 'lima', contractor: 'Lima', versions: [{ status: ANSWERED, subTotal: 52000 }] },
    ],
  },
  {
    key: 'C', trade: '03', budget: 30000, selected: 'mike',
    documents: [
      { key: 'mike', contractor: 'Mike', intention: NO, versions: [{ status: DECLINED, subTotal: 0 }] },
      { key: 'november', contractor: 'November', versions: [{ status: ANSWERED, subTotal: 31000 }] },
    ],
  },
  { key: 'D', trade: '04', budget: 20000, documents: [{ key: 'oscar', contractor: 'Oscar' }] },
];

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

beforeAll(async () => {
  t = await startTestApp();
  architect = await tokenFor(t.url, 'architect@demo.test');
  other = await tokenFor(t.url, 'other@demo.test');
  projectId = await createProject(t, architect, 'Leveling: crafted / "test" project');
  ids = await fillProject(t, projectId, CRAFTED);
  emptyProjectId = await createProject(t, architect, 'Leveling: no lot');
}, 60_000);
afterAll(() => t.close());

const get = (path: string, token = architect, headers: Record<string, string> = {}) => request(t.url, 'GET', `${P}${path}`, { token, headers });
const projectLeveling = async (query = ''): Promise<Json> => {
  const res = await get(`/projects/${projectId}/leveling${query}`);
  expect(res.status).toBe(200);
  return res.body.leveling;
};
const lotOf = (leveling: Json, key: string): Json => leveling.lots.find((l: Json) => l.template_id === ids[key]);
const entry = (lot: Json, key: string): Json => lot.documents.find((d: Json) => d.document_id === ids[key]);

describe('GET /api/svc/v1/projects/{projectId}/templates/{templateId}/leveling', () => {
  it('lists the offers by rank, equal offers sharing a rank, then the documents without an offer with their state', async () => {
    const res = await get(`/projects/${projectId}/templates/${ids.A}/leveling`);
    expect(res.status).toBe(200);
    const lot = res.body.leveling;
    expect(lot).toMatchObject({ template_id: ids.A, name: 'Gros œuvre', trade_number: '01', is_slice: false, slice: null, abnormally_low_below_median_percent: 20 });
    expect(lot.documents.map((d: Json) => [d.contractor_name, d.rank, d.state])).toEqual([
      ['Delta', 1, 'ANSWERED'], ['Alpha', 2, 'ANSWERED'], ['Bravo', 2, 'ANSWERED'], ['Hotel', 4, 'ANSWERED'],
      ['Charlie', 5, 'IN_REVISION'], ['Golf', 6, 'ANSWERED'],
      // Invited in this order.
      ['Echo', null, 'PENDING'], ['Foxtrot', null, 'DECLINED'],
    ]);
    expect(entry(lot, 'echo')).toMatchObject({ intention: 'MAYBE', offer: null, deviation_from_budget: null, deviation_from_median: null, lowest: false, retained: false, abnormally_low: false });
  });

  it('lists the documents without an offer by invitation, not by name (docs/leveling.md, "Order")', async () => {
    const invitedProject = await createProject(t, architect, 'Leveling: invitation order');
    const lots = await fillProject(t, invitedProject, [{
      key: 'lot', trade: '01', budget: 1000,
      documents: [
        { key: 'zulu', contractor: 'Zulu' },
        { key: 'xray', contractor: 'Xray', versions: [{ status: ANSWERED, subTotal: 900 }] },
        { key: 'yankee', contractor: 'Yankee', intention: NO, versions: [{ status: DECLINED, subTotal: 0 }] },
        { key: 'whiskey', contractor: 'Whiskey' },
      ],
    }]);
    const res = await get(`/projects/${invitedProject}/templates/${lots.lot}/leveling`);
    expect(res.body.leveling.documents.map((d: Json) => d.contractor_name)).toEqual(['Xray', 'Zulu', 'Yankee', 'Whiskey']);
  });

  it('takes the offer from the latest ANSWERED version: number, sent_at, sub_total, discount, amount', async () => {
    const lot = (await get(`/projects/${projectId}/templates/${ids.A}/leveling`)).body.leveling;
    // Alpha's second version; Charlie's first (its second is IN_REVISION).
    expect(entry(lot, 'alpha').offer).toEqual({ version: 2, sent_at: new Date(SENT_AT + 3_600_000).toISOString().replace('Z', '000Z'), sub_total: 90000, discount: 1000, amount: 89000 });
    expect(entry(lot, 'charlie').offer).toMatchObject({ version: 1, sub_total: 104000, discount: 0, amount: 104000 });
  });

  it('summarizes the lot: offers, lowest, highest, median of an even count, mean, spread, budget, retained', async () => {
    const lot = (await get(`/projects/${projectId}/templates/${ids.A}/leveling`)).body.leveling;
    expect(lot.summary).toEqual({
      documents: 8, offers: 6, lowest: 60000, highest: 110000.01, median: 92000, mean: 91166.67,
      spread: { value: 50000.01, percent: 83.33 }, budget: 100000, retained: 60000,
      retained_deviation: { value: -40000, percent: -40 }, abnormally_low: 1,
    });
  });

  it('gives each offer its deviation from the budget, the lowest and the median, value and percent rounded to 2 decimals', async () => {
    const lot = (await get(`/projects/${projectId}/templates/${ids.A}/leveling`)).body.leveling;
    expect(entry(lot, 'delta')).toMatchObject({
      deviation_from_budget: { value: -40000, percent: -40 }, deviation_from_lowest: { value: 0, percent: 0 },
      // -32,000 / 92,000 = -34.7826...
      deviation_from_median: { value: -32000, percent: -34.78 },
    });
    expect(entry(lot, 'alpha')).toMatchObject({
      deviation_from_budget: { value: -11000, percent: -11 },
      // 29,000 / 60,000 = 48.333...; -3,000 / 92,000 = -3.2608...
      deviation_from_lowest: { value: 29000, percent: 48.33 }, deviation_from_median: { value: -3000, percent: -3.26 },
    });
    expect(entry(lot, 'golf')).toMatchObject({
      // 10,000.01 / 100,000 = 10.00001 %; 50,000.01 / 60,000 = 83.33335 %; 18,000.01 / 92,000 = 19.5652...
      deviation_from_budget: { value: 10000.01, percent: 10 }, deviation_from_lowest: { value: 50000.01, percent: 83.33 },
      deviation_from_median: { value: 18000.01, percent: 19.57 },
    });
  });

  it('flags abnormally low the offers below the median by more than 20 % by default', async () => {
    const lot = (await get(`/projects/${projectId}/templates/${ids.A}/leveling`)).body.leveling;
    expect(lot.documents.filter((d: Json) => d.abnormally_low).map((d: Json) => d.contractor_name)).toEqual(['Delta']);
  });

  it('flags abnormally low against the threshold asked for: 3 % flags the ties at 89,000, 35 % none', async () => {
    const low = async (threshold: string) => {
      const res = await get(`/projects/${projectId}/templates/${ids.A}/leveling?abnormally_low_below_median_percent=${threshold}`);
      expect(res.status).toBe(200);
      expect(res.body.leveling.abnormally_low_below_median_percent).toBe(Number(threshold));
      return res.body.leveling.documents.filter((d: Json) => d.abnormally_low).map((d: Json) => d.contractor_name);
    };
    // Below 92,000 x 0.97 = 89,240.
    expect(await low('3')).toEqual(['Delta', 'Alpha', 'Bravo']);
    // Below 92,000 x 0.65 = 59,800: 60,000 is not.
    expect(await low('35')).toEqual([]);
    // 34.78 % below: flagged at 34.5, not at 34.8.
    expect(await low('34.5')).toEqual(['Delta']);
    expect(await low('34.8')).toEqual([]);
    // 0: anything below the median.
    expect(await low('0')).toEqual(['Delta', 'Alpha', 'Bravo']);
  });

  it('retains the lowest offers when no consultation is selected: both of a tie, equal offers all lowest', async () => {
    const slice = (await get(`/projects/${projectId}/templates/${ids['Tranche 1']}/leveling`)).body.leveling;
    expect(slice).toMatchObject({ name: 'Gros œuvre - Tranche 1', is_slice: true, slice: 'Tranche 1', selected_consultation_id: null });
    expect(slice.documents.map((d: Json) => [d.contractor_name, d.rank, d.lowest, d.retained, d.selected, d.abnormally_low])).toEqual([
      ['Alpha', 1, true, true, false, false], ['Bravo', 1, true, true, false, false],
    ]);
  });

  it('answers a budget of 0 with percents of 0 against it, and all offers equal with a spread of 0', async () => {
    const slice = (await get(`/projects/${projectId}/templates/${ids['Tranche 1']}/leveling`)).body.leveling;
    expect(slice.summary).toEqual({
      documents: 2, offers: 2, lowest: 1000, highest: 1000, median: 1000, mean: 1000, spread: { value: 0, percent: 0 }, budget: 0,
      retained: 1000, retained_deviation: { value: 1000, percent: 0 }, abnormally_low: 0,
    });
    expect(entry(slice, 'alphaSlice').deviation_from_budget).toEqual({ value: 1000, percent: 0 });
  });

  it('retains the selected consultation\'s offer rather than the lowest, and rounds a median of x.xx5 away from zero', async () => {
    const lot = (await get(`/projects/${projectId}/templates/${ids.B}/leveling`)).body.leveling;
    expect(lot.selected_consultation_id).toBe(ids.kilo);
    expect(lot.documents.map((d: Json) => [d.contractor_name, d.rank, d.lowest, d.retained, d.selected])).toEqual([
      ['India', 1, true, false, false], ['Juliet', 2, false, false, false], ['Kilo', 3, false, true, true], ['Lima', 4, false, false, false],
    ]);
    expect(lot.summary).toMatchObject({ median: 42500.01, mean: 44250, lowest: 40000, retained: 45000, retained_deviation: { value: -5000, percent: -10 } });
    // 40,000 - 42,500.005 = -2,500.005 → -2,500.01; -5.88235... %.
    expect(entry(lot, 'india').deviation_from_median).toEqual({ value: -2500.01, percent: -5.88 });
    expect(entry(lot, 'lima').deviation_from_budget).toEqual({ value: 2000, percent: 4 });
  });

  it('retains the lowest offer when the selected consultation has none, which stays flagged selected; one offer is lowest and median', async () => {
    const lot = (await get(`/projects/${projectId}/templates/${ids.C}/leveling`)).body.leveling;
    expect(lot.documents.map((d: Json) => [d.contractor_name, d.rank, d.state, d.lowest, d.retained, d.selected])).toEqual([
      ['November', 1, 'ANSWERED', true, true, false], ['Mike', null, 'DECLINED', false, false, true],
    ]);
    expect(lot.summary).toMatchObject({ offers: 1, lowest: 31000, highest: 31000, median: 31000, mean: 31000, spread: { value: 0, percent: 0 }, retained: 31000 });
  });

  it('answers a lot with no offer with null figures and its documents', async () => {
    const lot = (await get(`/projects/${projectId}/templates/${ids.D}/leveling`)).body.leveling;
    expect(lot.summary).toEqual({
      documents: 1, offers: 0, lowest: null, highest: null, median: null, mean: null, spread: null, budget: 20000,
      retained: null, retained_deviation: null, abnormally_low: 0,
    });
    expect(lot.documents).toEqual([expect.objectContaining({ contractor_name: 'Oscar', state: 'PENDING', offer: null, rank: null })]);
  });

  it('agrees with the project\'s leveling, lot for lot', async () => {
    const project = await projectLeveling();
    for (const key of ['A', 'Tranche 1', 'B', 'C', 'D']) {
      expect((await get(`/projects/${projectId}/templates/${ids[key]}/leveling`)).body.leveling).toEqual(lotOf(project, key));
    }
  });

  it('is 404 for a template of another project, and for another organization\'s project or template', async () => {
    const demo = DEMO_IDS.templates;
    expect((await get(`/projects/${projectId}/templates/${demo.residenceCharpente}/leveling`)).status).toBe(404);
    expect((await get(`/projects/${DEMO_IDS.projects.residence}/templates/${ids.A}/leveling`)).status).toBe(404);
    const foreign = await get(`/projects/${DEMO_IDS.projects.cabinetSudHall}/templates/${demo.cabinetSudCharpente}/leveling`);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ code: 404, message: 'Project not found' });
    const otherCaller = await get(`/projects/${projectId}/templates/${ids.A}/leveling`, other);
    expect(otherCaller.body).toEqual({ code: 404, message: 'Project not found' });
    expect((await get(`/projects/${projectId}/templates/${DEMO_IDS.projects.residence}/leveling`)).body).toEqual({ code: 404, message: 'Template not found' });
  });

  it('is 400 for a threshold outside 0-100 or not a number, and for an unknown parameter', async () => {
    for (const bad of ['101', '-1', 'abc', '', '1e2', '20%']) {
      const res = await get(`/projects/${projectId}/templates/${ids.A}/leveling?abnormally_low_below_median_percent=${encodeURIComponent(bad)}`);
      expect([bad, res.status, res.body.errors]).toEqual([bad, 400, [{ field: 'abnormally_low_below_median_percent', message: 'must be a number from 0 to 100' }]]);
    }
    const unknown = await get(`/projects/${projectId}/templates/${ids.A}/leveling?format=xlsx`);
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toEqual([{ field: 'format', message: 'is not accepted by this operation' }]);
    expect((await get(`/projects/${projectId}/templates/not-a-uuid/leveling`)).status).toBe(400);
  });
});

describe('GET /api/svc/v1/projects/{projectId}/leveling', () => {
  it('lists the lots by trade number, each template before its slices, slices as their own lots', async () => {
    const leveling = await projectLeveling();
    expect(leveling).toMatchObject({ project_id: projectId, name: 'Leveling: crafted / "test" project', currency: 'EUR', archived: false, abnormally_low_below_median_percent: 20 });
    expect(leveling.lots.map((l: Json) => [l.trade_number, l.name, l.summary.offers])).toEqual([
      ['01', 'Gros œuvre', 6], ['01', 'Gros œuvre - Tranche 1', 2], ['02', 'Charpente', 4], ['03', 'Couverture', 1], ['04', 'Menuiseries extérieures', 0],
    ]);
  });

  it('has one column per contractor with an offer, by name, each once whatever its lots, and one row per lot', async () => {
    const leveling = await projectLeveling();
    expect(leveling.contractors.map((c: Json) => c.contractor_name)).toEqual(['Alpha', 'Bravo', 'Charlie', 'Delta', 'Golf', 'Hotel', 'India', 'Juliet', 'Kilo', 'Lima', 'November']);
    const amounts = leveling.matrix.map((row: Json) => [row.name, row.budget, ...row.cells.map((c: Json) => c.amount), row.lowest, row.retained]);
    const _ = null;
    expect(amounts).toEqual([
      ['Gros œuvre', 100000, 89000, 89000, 104000, 60000, 110000.01, 95000, _, _, _, _, _, 60000, 60000],
      ['Gros œuvre - Tranche 1', 0, 1000, 1000, _, _, _, _, _, _, _, _, _, 1000, 1000],
      ['Charpente', 50000, _, _, _, _, _, _, 40000, 40000.01, 45000, 52000, _, 40000, 45000],
      ['Couverture', 30000, _, _, _, _, _, _, _, _, _, _, 31000, 31000, 31000],
      ['Menuiseries extérieures', 20000, _, _, _, _, _, _, _, _, _, _, _, _, _],
    ]);
    const delta = leveling.matrix[0].cells[3];
    expect(delta).toEqual({ contractor_id: leveling.contractors[3].contractor_id, document_id: ids.delta, state: 'ANSWERED', amount: 60000, rank: 1, lowest: true, retained: true, abnormally_low: true });
    expect(leveling.matrix[0].cells[7]).toEqual({ contractor_id: leveling.contractors[7].contractor_id, document_id: null, state: null, amount: null, rank: null, lowest: false, retained: false, abnormally_low: false });
  });

  it('sums the lowest and the retained offers of the lots against the total budget, and lists the lots with no offer yet', async () => {
    const leveling = await projectLeveling();
    // Budget 100,000 + 0 + 50,000 + 30,000 + 20,000; lowest 60,000 + 1,000 + 40,000 + 31,000; retained 60,000 + 1,000 + 45,000 + 31,000.
    expect(leveling.totals).toEqual({
      lots: 5, lots_with_offers: 4, budget: 200000, offered_lots_budget: 180000,
      lowest: 132000, lowest_deviation: { value: -68000, percent: -34 },
      retained: 137000, retained_deviation: { value: -63000, percent: -31.5 },
    });
    expect(leveling.lots_without_offers).toEqual([{ template_id: ids.D, name: 'Menuiseries extérieures', budget: 20000, documents: 1 }]);
  });

  it('retains what the project statistics count (decisions.md section 5)', async () => {
    const statistics = (await get(`/projects/${projectId}/statistics`)).body.project.statistics;
    const leveling = await projectLeveling();
    expect(statistics.budgets.total).toBe(leveling.totals.budget);
    expect(statistics.budgets.total_anticipated_offers).toBe(leveling.totals.retained);
    expect(statistics.budgets.total_anticipated_trades).toBe(leveling.totals.offered_lots_budget);
  });

  it('answers a project with no lot with empty lists and sums of 0', async () => {
    const res = await get(`/projects/${emptyProjectId}/leveling`);
    expect(res.status).toBe(200);
    expect(res.body.leveling).toMatchObject({
      lots: [], contractors: [], matrix: [], lots_without_offers: [],
      totals: { lots: 0, lots_with_offers: 0, budget: 0, offered_lots_budget: 0, lowest: 0, lowest_deviation: { value: 0, percent: 0 }, retained: 0, retained_deviation: { value: 0, percent: 0 } },
    });
  });

  it('keeps archived projects readable', async () => {
    const res = await get(`/projects/${DEMO_IDS.projects.archivedHouse}/leveling`);
    expect(res.status).toBe(200);
    expect(res.body.leveling).toMatchObject({ archived: true, lots: [expect.objectContaining({ template_id: DEMO_IDS.templates.archivedHouseGrosOeuvre })] });
  });

  it('is 404 for another organization\'s project, whoever asks, and 403 for a caller who is no Administrator', async () => {
    expect(await get(`/projects/${DEMO_IDS.projects.cabinetSudHall}/leveling`)).toMatchObject({ status: 404, body: { code: 404, message: 'Project not found' } });
    expect((await get(`/projects/${projectId}/leveling`, other)).status).toBe(404);
    expect((await get(`/projects/${projectId}/leveling?format=xlsx`, other)).status).toBe(404);
    expect((await get(`/projects/${projectId}/leveling`, other, { Accept: 'text/csv' })).body).toEqual({ code: 404, message: 'Project not found' });
    const member = await tokenFor(t.url, 'member@demo.test');
    expect((await get(`/projects/${projectId}/leveling`, member)).status).toBe(403);
    expect((await request(t.url, 'GET', `${P}/projects/${projectId}/leveling`)).status).toBe(401);
  });

  it('is 400 for a threshold outside 0-100 and for a format it does not make', async () => {
    const bad = await get(`/projects/${projectId}/leveling?abnormally_low_below_median_percent=100.5&format=pdf`);
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual(expect.arrayContaining([
      { field: 'abnormally_low_below_median_percent', message: 'must be a number from 0 to 100' },
      { field: 'format', message: 'must be one of: json, xlsx, csv' },
    ]));
    expect((await get(`/projects/${projectId}/leveling?abnormally_low_below_median_percent=100`)).status).toBe(200);
  });
});

describe('GET /api/svc/v1/projects/{projectId}/leveling as a spreadsheet', () => {
  async function workbook(res: { status: number; headers: Headers }, body: Buffer): Promise<ExcelJS.Workbook> {
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(XLSX);
    const book = new ExcelJS.Workbook();
    await book.xlsx.load(body as never);
    return book;
  }
  const xlsx = async (query: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${t.url}${P}/projects/${projectId}/leveling${query}`, { headers: { Authorization: `Bearer ${architect}`, ...headers } });
    return { res, body: Buffer.from(await res.arrayBuffer()) };
  };

  it('answers Accept: ...spreadsheetml.sheet with a download named after the project', async () => {
    const { res, body } = await xlsx('', { Accept: XLSX });
    await workbook(res, body);
    // The project's name without what file systems refuse (`/`, `"`).
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="Leveling crafted test project - leveling.xlsx"');
  });

  it('names a download of a project whose name is not ASCII in UTF-8 too (RFC 6266 filename*)', async () => {
    const res = await fetch(`${t.url}${P}/projects/${DEMO_IDS.projects.residence}/leveling?format=xlsx`, { headers: { Authorization: `Bearer ${architect}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toContain("filename*=UTF-8''R%C3%A9sidence%20Les%20Tilleuls%20%E2%80%93%2042%20logements%20-%20leveling.xlsx");
  });

  it('has a summary sheet and one sheet per lot, with frozen header rows', async () => {
    const { res, body } = await xlsx('?format=xlsx');
    const book = await workbook(res, body);
    expect(book.worksheets.map((s) => s.name)).toEqual([SUMMARY_SHEET, '01 Gros œuvre', '01 Gros œuvre - Tranche 1', '02 Charpente', '03 Couverture', '04 Menuiseries extérieures']);
    expect(book.getWorksheet(SUMMARY_SHEET)!.views[0]).toMatchObject({ state: 'frozen', ySplit: SUMMARY_HEADER_ROW });
    for (const sheet of book.worksheets.slice(1)) {
      expect(sheet.views[0]).toMatchObject({ state: 'frozen', ySplit: LOT_HEADER_ROW });
      expect((sheet.getRow(LOT_HEADER_ROW).values as unknown[]).slice(1)).toEqual([...LOT_COLUMNS]);
    }
  });

  it('stores every offer as a number equal to the JSON answer, in the project\'s currency format', async () => {
    const leveling = await projectLeveling();
    const { res, body } = await xlsx('?format=xlsx');
    const book = await workbook(res, body);
    const summary = book.getWorksheet(SUMMARY_SHEET)!;
    expect((summary.getRow(SUMMARY_HEADER_ROW).values as unknown[]).slice(1, 4 + leveling.contractors.length + 2))
      .toEqual(['Lot', 'Name', 'Budget', ...leveling.contractors.map((c: Json) => c.contractor_name), 'Lowest', 'Retained']);
    leveling.matrix.forEach((row: Json, i: number) => {
      const r = summary.getRow(SUMMARY_HEADER_ROW + 1 + i);
      expect(r.getCell(3).value).toBe(row.budget);
      row.cells.forEach((c: Json, k: number) => expect(r.getCell(4 + k).value).toBe(c.amount));
    });
    leveling.lots.forEach((lot: Json, i: number) => {
      const sheet = book.worksheets[i + 1];
      lot.documents.forEach((d: Json, k: number) => {
        const r = sheet.getRow(LOT_HEADER_ROW + 1 + k);
        expect([r.getCell(1).value, r.getCell(2).value, r.getCell(3).value]).toEqual([d.rank, d.contractor_name, d.state]);
        const offer = r.getCell(LOT_COLUMNS.indexOf('Offer') + 1);
        expect(offer.value).toBe(d.offer?.amount ?? null);
        if (d.offer) {
          expect(typeof offer.value).toBe('number');
          expect(offer.numFmt).toBe('#,##0.00 "€"');
          expect(r.getCell(LOT_COLUMNS.indexOf('Deviation from median %') + 1).value).toBeCloseTo(d.deviation_from_median.percent / 100, 10);
        }
      });
    });
  });

  it('highlights the lowest offers (green, bold) and the abnormally low ones (red)', async () => {
    const { res, body } = await xlsx('?format=xlsx&abnormally_low_below_median_percent=3');
    const book = await workbook(res, body);
    const sheet = book.getWorksheet('01 Gros œuvre')!;
    const rowOf = (name: string) => sheet.getRows(LOT_HEADER_ROW + 1, 8)!.find((r) => r.getCell(2).value === name)!;
    const fillOf = (name: string) => (rowOf(name).getCell(LOT_COLUMNS.indexOf('Offer') + 1).fill as ExcelJS.FillPattern | undefined)?.fgColor?.argb;
    // Delta: lowest and abnormally low (red wins, bold stays); Alpha and Bravo: abnormally low at 3 %.
    expect([fillOf('Delta'), rowOf('Delta').getCell(2).font?.bold]).toEqual([ABNORMALLY_LOW_FILL, true]);
    expect([fillOf('Alpha'), fillOf('Bravo'), fillOf('Hotel'), fillOf('Echo')]).toEqual([ABNORMALLY_LOW_FILL, ABNORMALLY_LOW_FILL, undefined, undefined]);
    const slice = book.getWorksheet('01 Gros œuvre - Tranche 1')!;
    expect((slice.getRow(LOT_HEADER_ROW + 1).getCell(9).fill as ExcelJS.FillPattern).fgColor?.argb).toBe(LOWEST_FILL);
    // The same on the summary's matrix: at 3 %, Charpente's India and Juliet (below 42,500.005 x 0.97) red, Kilo
    // not; Couverture's one offer (November) green.
    const summary = book.getWorksheet(SUMMARY_SHEET)!;
    const matrixFill = (row: number, column: number) => (summary.getRow(SUMMARY_HEADER_ROW + row).getCell(3 + column).fill as ExcelJS.FillPattern | undefined)?.fgColor?.argb;
    expect(summary.getRow(SUMMARY_HEADER_ROW + 3).getCell(2).value).toBe('Charpente');
    expect([matrixFill(3, 7), matrixFill(3, 8), matrixFill(3, 9)]).toEqual([ABNORMALLY_LOW_FILL, ABNORMALLY_LOW_FILL, undefined]);
    expect(summary.getRow(SUMMARY_HEADER_ROW + 4).getCell(2).value).toBe('Couverture');
    expect(matrixFill(4, 11)).toBe(LOWEST_FILL);
  });

  it('answers text/csv with the lots × contractors matrix, which a CSV parser reads back to the JSON\'s numbers', async () => {
    const leveling = await projectLeveling();
    const res = await rawRequest(`${t.url}${P}/projects/${projectId}/leveling`, { token: architect, headers: { Accept: 'text/csv' } });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8; header=present');
    expect(res.headers['content-disposition']).toBe('attachment; filename="Leveling crafted test project - leveling.csv"');
    const rows: string[][] = parse(res.body.toString('utf8'));
    expect(rows[0]).toEqual(['Lot', 'Name', 'Budget', ...leveling.contractors.map((c: Json) => c.contractor_name), 'Lowest', 'Retained']);
    const cell = (s: string) => (s === '' ? null : Number(s));
    leveling.matrix.forEach((row: Json, i: number) => {
      expect(rows[i + 1].slice(2).map(cell)).toEqual([row.budget, ...row.cells.map((c: Json) => c.amount), row.lowest, row.retained]);
    });
    expect(rows[rows.length - 1].map((s, i) => (i < 2 ? s : cell(s)))).toEqual(['Total', '', 200000, ...leveling.contractors.map(() => null), 132000, 137000]);
  });

  it('lets format win over Accept, and answers JSON to an Accept that names none of its formats', async () => {
    const json = await get(`/projects/${projectId}/leveling?format=json`, architect, { Accept: XLSX });
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    const csv = await get(`/projects/${projectId}/leveling?format=csv`, architect, { Accept: XLSX });
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    const other = await get(`/projects/${projectId}/leveling`, architect, { Accept: 'application/xml' });
    expect([other.status, other.body.leveling?.project_id]).toEqual([200, projectId]);
  });
});

describe('Template.leveling and Project.leveling (GraphQL)', () => {
  const LOT = `templateId name summary { offers lowest median retained } documents { documentId rank lowest retained selected abnormallyLow
    offer { version amount } deviationFromMedian { value percent } contractor { id name } }`;

  it('answer what REST answers, in camelCase, with cache ids naming the threshold', async () => {
    const res = await gql(t.url, architect, `query($id: ID!) { project(id: $id) {
      leveling(abnormallyLowBelowMedianPercent: 3) { id projectId totals { lowest retained } contractors { contractorId contractor { name } } lots { id ${LOT} } }
      templates { id leveling { id abnormallyLowBelowMedianPercent ${LOT} } } } }`, { id: projectId });
    expect(res.body.errors).toBeUndefined();
    const { leveling, templates } = res.body.data.project;
    expect(leveling.id).toBe(`${projectId}:leveling:3`);
    expect(leveling.totals).toEqual({ lowest: 132000, retained: 137000 });
    expect(leveling.contractors.map((c: Json) => c.contractor.name)).toEqual(['Alpha', 'Bravo', 'Charlie', 'Delta', 'Golf', 'Hotel', 'India', 'Juliet', 'Kilo', 'Lima', 'November']);
    const lotA = leveling.lots[0];
    expect(lotA.id).toBe(`${ids.A}:leveling:3`);
    expect(lotA.documents.filter((d: Json) => d.abnormallyLow).map((d: Json) => d.contractor.name)).toEqual(['Delta', 'Alpha', 'Bravo']);
    const templateA = templates.find((x: Json) => x.id === ids.A).leveling;
    expect(templateA).toMatchObject({ id: `${ids.A}:leveling:20`, abnormallyLowBelowMedianPercent: 20 });
    expect(templateA.documents.filter((d: Json) => d.abnormallyLow).map((d: Json) => d.contractor.name)).toEqual(['Delta']);
    const rest = (await get(`/projects/${projectId}/templates/${ids.A}/leveling`)).body.leveling;
    expect(templateA.summary).toEqual({ offers: rest.summary.offers, lowest: rest.summary.lowest, median: rest.summary.median, retained: rest.summary.retained });
    expect(templateA.documents.map((d: Json) => [d.documentId, d.rank, d.offer?.amount ?? null, d.deviationFromMedian])).toEqual(
      rest.documents.map((d: Json) => [d.document_id, d.rank, d.offer?.amount ?? null, d.deviation_from_median]));
  });

  it('is NOT_FOUND for another organization\'s project', async () => {
    const res = await gql(t.url, architect, `query($id: ID!) { project(id: $id) { leveling { projectId } } }`, { id: DEMO_IDS.projects.cabinetSudHall });
    expect(res.body.data).toBeNull();
    expect(res.body.errors[0].extensions.code).toBe('NOT_FOUND');
    const theirs = await gql(t.url, other, `query($id: ID!) { project(id: $id) { templates { leveling { templateId } } } }`, { id: projectId });
    expect(theirs.body.errors[0].extensions.code).toBe('NOT_FOUND');
  });

  it('is BAD_USER_INPUT for a threshold outside 0-100, naming the argument', async () => {
    for (const value of [-0.5, 100.01]) {
      const res = await gql(t.url, architect, `query($id: ID!, $p: Float) { project(id: $id) { leveling(abnormallyLowBelowMedianPercent: $p) { projectId } } }`, { id: projectId, p: value });
      expect(res.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', errors: [{ field: 'abnormallyLowBelowMedianPercent', message: 'must be a number from 0 to 100' }] });
    }
  });
});
