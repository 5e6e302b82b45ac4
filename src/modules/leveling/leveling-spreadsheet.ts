import ExcelJS from 'exceljs';
import { stringify } from 'csv-stringify/sync';
import type { LevelingEntry, ProjectLeveling, TemplateLeveling } from './leveling.output';

/**
 * The leveling of a project as files (docs/leveling.md): an .xlsx workbook (a summary sheet with the
 * lots × contractors matrix and the sums, then one sheet per lot) and the matrix as CSV. Figures are the
 * JSON answer's, stored as numbers; only their display depends on the project's currency.
 */

export const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
export const CSV_TYPE = 'text/csv';

/** Excel's own "Good" and "Bad" cell styles: lowest offers green, abnormally low ones red (which wins). */
export const LOWEST_FILL = 'FFC6EFCE';
export const ABNORMALLY_LOW_FILL = 'FFFFC7CE';

/** Number formats of the currencies a project may have (CURRENCIES); no currency: plain 2 decimals. */
const CURRENCY_FORMATS: Record<string, string> = {
  EUR: '#,##0.00 "€"',
  USD: '"$"#,##0.00',
  GBP: '"£"#,##0.00',
  CHF: '"CHF" #,##0.00',
  DZD: '#,##0.00 "DA"',
  MAD: '#,##0.00 "MAD"',
  TND: '#,##0.00 "DT"',
};
const PLAIN_MONEY = '#,##0.00';
/** Percents are stored as fractions (12.34 % is 0.1234), as spreadsheets expect. */
const PERCENT = '0.00%';
const TIMESTAMP = 'yyyy-mm-dd hh:mm';

export const SUMMARY_SHEET = 'Summary';
/** Rows above the column headers of each sheet, all frozen with them. */
export const SUMMARY_HEADER_ROW = 4;
export const LOT_HEADER_ROW = 5;

export const LOT_COLUMNS = [
  'Rank', 'Contractor', 'State', 'Intention', 'Version', 'Sent at', 'Sub-total', 'Discount', 'Offer',
  'Deviation from budget', 'Deviation from budget %', 'Deviation from lowest', 'Deviation from lowest %',
  'Deviation from median', 'Deviation from median %', 'Lowest', 'Retained', 'Selected', 'Abnormally low',
] as const;
const LOT_SUMMARY_COLUMNS = ['Budget', 'Documents', 'Offers', 'Lowest', 'Median', 'Mean', 'Highest', 'Spread', 'Spread %', 'Retained', 'Retained deviation', 'Retained deviation %'];

/** Names in a header row, made distinct (two directory entries may share a name). */
function distinct(names: string[]): string[] {
  const seen = new Map<string, number>();
  return names.map((name) => {
    const n = (seen.get(name) ?? 0) + 1;
    seen.set(name, n);
    return n === 1 ? name : `${name} (${n})`;
  });
}

/** The matrix's header: lot number and name, budget, one column per contractor, the lot's lowest and retained offers. */
function matrixHeader(leveling: ProjectLeveling): string[] {
  return ['Lot', 'Name', 'Budget', ...distinct(leveling.contractors.map((c) => c.contractorName)), 'Lowest', 'Retained'];
}

/**
 * A sheet name Excel accepts: at most 31 characters, none of `[]:*?/\`, not quoted, distinct from the others
 * whatever their case.
 */
function sheetName(wanted: string, taken: Set<string>): string {
  // eslint-disable-next-line no-control-regex -- control characters are what it removes
  const base = wanted.replace(/[[\]:*?/\\\u0000-\u001f]/g, ' ').replace(/^'+|'+$/g, '').trim() || 'Lot';
  for (let n = 1; ; n++) {
    const suffix = n === 1 ? '' : ` (${n})`;
    const name = base.slice(0, 31 - suffix.length).trimEnd() + suffix;
    if (!taken.has(name.toLowerCase())) {
      taken.add(name.toLowerCase());
      return name;
    }
  }
}

const fill = (argb: string): ExcelJS.Fill => ({ type: 'pattern', pattern: 'solid', fgColor: { argb } });

/** Green and bold for a lowest offer, red for an abnormally low one. */
function highlight(cell: ExcelJS.Cell, flags: { lowest: boolean; abnormallyLow: boolean }): void {
  if (flags.lowest) cell.font = { ...cell.font, bold: true };
  if (flags.abnormallyLow) cell.fill = fill(ABNORMALLY_LOW_FILL);
  else if (flags.lowest) cell.fill = fill(LOWEST_FILL);
}

function headerRow(sheet: ExcelJS.Worksheet, row: number, names: readonly string[]): void {
  const r = sheet.getRow(row);
  names.forEach((name, i) => {
    const cell = r.getCell(i + 1);
    cell.value = name;
    cell.font = { bold: true };
    cell.alignment = { vertical: 'middle', wrapText: true };
    cell.border = { bottom: { style: 'thin' } };
  });
}

const yesNo = (b: boolean) => (b ? 'yes' : '');
const fraction = (percent: number | undefined | null) => (percent === null || percent === undefined ? null : percent / 100);

function summarySheet(book: ExcelJS.Workbook, leveling: ProjectLeveling, money: string): void {
  const sheet = book.addWorksheet(SUMMARY_SHEET, { views: [{ state: 'frozen', xSplit: 2, ySplit: SUMMARY_HEADER_ROW }] });
  sheet.getCell('A1').value = `Bid leveling: ${leveling.name}`;
  sheet.getCell('A1').font = { bold: true, size: 14 };
  sheet.getCell('A2').value = `Currency: ${leveling.currency ?? 'none'}. Abnormally low: more than ${leveling.abnormallyLowBelowMedianPercent} % below the lot's median offer (red); lowest offers in bold (green).`;
  const header = matrixHeader(leveling);
  const after = ['Offers', 'Median', 'Retained deviation', 'Retained deviation %'];
  headerRow(sheet, SUMMARY_HEADER_ROW, [...header, ...after]);
  const contractors = leveling.contractors.length;
  // Budget, the contractors' offers, the lowest and the retained offer.
  const moneyColumns = [3, ...Array.from({ length: contractors + 2 }, (_, i) => 4 + i)];
  leveling.matrix.forEach((row, i) => {
    const lot = leveling.lots[i];
    const r = sheet.getRow(SUMMARY_HEADER_ROW + 1 + i);
    r.values = [
      lot.tradeNumber, row.name, row.budget, ...row.cells.map((c) => c.amount), row.lowest, row.retained,
      lot.summary.offers, lot.summary.median, lot.summary.retainedDeviation?.value ?? null, fraction(lot.summary.retainedDeviation?.percent),
    ];
    row.cells.forEach((c, k) => highlight(r.getCell(4 + k), c));
  });
  const totals = sheet.getRow(SUMMARY_HEADER_ROW + 1 + leveling.matrix.length);
  const t = leveling.totals;
  totals.values = [
    'Total', `${t.lotsWithOffers} of ${t.lots} lots with offers; budget of those: ${t.offeredLotsBudget}`, t.budget,
    ...Array<null>(contractors).fill(null), t.lowest, t.retained, null, null, t.retainedDeviation.value, fraction(t.retainedDeviation.percent),
  ];
  totals.font = { bold: true };
  totals.getCell(2).font = { bold: false, italic: true };
  const last = SUMMARY_HEADER_ROW + 1 + leveling.matrix.length;
  for (let row = SUMMARY_HEADER_ROW + 1; row <= last; row++) {
    for (const col of moneyColumns) sheet.getCell(row, col).numFmt = money;
    sheet.getCell(row, header.length + 2).numFmt = money;
    sheet.getCell(row, header.length + 3).numFmt = money;
    sheet.getCell(row, header.length + 4).numFmt = PERCENT;
  }
  sheet.getColumn(1).width = 8;
  sheet.getColumn(2).width = 32;
  for (let col = 3; col <= header.length + after.length; col++) sheet.getColumn(col).width = 16;
  sheet.getRow(SUMMARY_HEADER_ROW).height = 32;
}

function lotSheet(book: ExcelJS.Workbook, lot: TemplateLeveling, name: string, money: string): void {
  const sheet = book.addWorksheet(name, { views: [{ state: 'frozen', xSplit: 2, ySplit: LOT_HEADER_ROW }] });
  sheet.getCell('A1').value = `${lot.tradeNumber} ${lot.name}`;
  sheet.getCell('A1').font = { bold: true, size: 13 };
  headerRow(sheet, 2, LOT_SUMMARY_COLUMNS);
  const s = lot.summary;
  sheet.getRow(3).values = [
    s.budget, s.documents, s.offers, s.lowest, s.median, s.mean, s.highest, s.spread?.value ?? null, fraction(s.spread?.percent),
    s.retained, s.retainedDeviation?.value ?? null, fraction(s.retainedDeviation?.percent),
  ];
  for (const col of [1, 4, 5, 6, 7, 8, 10, 11]) sheet.getCell(3, col).numFmt = money;
  for (const col of [9, 12]) sheet.getCell(3, col).numFmt = PERCENT;
  headerRow(sheet, LOT_HEADER_ROW, LOT_COLUMNS);
  lot.documents.forEach((d: LevelingEntry, i) => {
    const r = sheet.getRow(LOT_HEADER_ROW + 1 + i);
    const o = d.offer;
    r.values = [
      d.rank, d.contractorName, d.state, d.intention, o?.version ?? null, o?.sentAt ?? null, o?.subTotal ?? null, o?.discount ?? null,
      o?.amount ?? null, d.deviationFromBudget?.value ?? null, fraction(d.deviationFromBudget?.percent),
      d.deviationFromLowest?.value ?? null, fraction(d.deviationFromLowest?.percent),
      d.deviationFromMedian?.value ?? null, fraction(d.deviationFromMedian?.percent),
      yesNo(d.lowest), yesNo(d.retained), yesNo(d.selected), yesNo(d.abnormallyLow),
    ];
    r.getCell(6).numFmt = TIMESTAMP;
    for (const col of [7, 8, 9, 10, 12, 14]) r.getCell(col).numFmt = money;
    for (const col of [11, 13, 15]) r.getCell(col).numFmt = PERCENT;
    for (let col = 1; col <= LOT_COLUMNS.length; col++) highlight(r.getCell(col), d);
  });
  sheet.getColumn(2).width = 32;
  for (let col = 3; col <= LOT_COLUMNS.length; col++) sheet.getColumn(col).width = col === 6 ? 17 : 14;
  sheet.getRow(LOT_HEADER_ROW).height = 32;
}

/** The .xlsx of a project's leveling. */
export async function levelingWorkbook(leveling: ProjectLeveling): Promise<Buffer> {
  const book = new ExcelJS.Workbook();
  book.creator = 'Tender BFF';
  book.title = `Bid leveling: ${leveling.name}`;
  const money = (leveling.currency && CURRENCY_FORMATS[leveling.currency]) || PLAIN_MONEY;
  summarySheet(book, leveling, money);
  const taken = new Set([SUMMARY_SHEET.toLowerCase()]);
  for (const lot of leveling.lots) lotSheet(book, lot, sheetName(`${lot.tradeNumber} ${lot.name}`, taken), money);
  return Buffer.from(await book.xlsx.writeBuffer());
}

/**
 * The lots × contractors matrix as CSV (RFC 4180, UTF-8, comma, dot decimals, no thousands separator): the
 * header of matrixHeader, a row per lot (an empty cell where a contractor made no offer), then a `Total` row
 * with the sums of the budgets, of the lowest and of the retained offers. Text a spreadsheet would run as a
 * formula (`=`, `+`, `-`, `@`) is prefixed with `'`.
 */
export function levelingCsv(leveling: ProjectLeveling): string {
  const rows: unknown[][] = [matrixHeader(leveling)];
  leveling.matrix.forEach((row, i) => {
    rows.push([leveling.lots[i].tradeNumber, row.name, row.budget, ...row.cells.map((c) => c.amount), row.lowest, row.retained]);
  });
  const t = leveling.totals;
  rows.push(['Total', '', t.budget, ...Array<null>(leveling.contractors.length).fill(null), t.lowest, t.retained]);
  return stringify(rows, { escape_formulas: true, record_delimiter: 'windows' });
}

/** A download's file name from the project's name: what no file system refuses, kept readable. */
export function levelingFileName(leveling: ProjectLeveling, extension: 'xlsx' | 'csv'): string {
  // eslint-disable-next-line no-control-regex -- control characters are what it removes
  const base = leveling.name.replace(/[\\/:*?"<>|\u0000-\u001f\u007f]+/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 120) || 'project';
  return `${base} - leveling.${extension}`;
}
