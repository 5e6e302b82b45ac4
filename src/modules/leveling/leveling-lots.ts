import type { LevelingEntry, ProjectLeveling, TemplateLeveling } from './leveling.output';
import { lotName } from '../templates/template.service';
import { belowMedian, halve, meanOf, medianOf, percentOf, thresholdOf } from './leveling-figures';
import { cents, money, moneyNumeric } from '../../platform/money/money';
import { percent, sub, toNumber, type Numeric } from '../../platform/money/pg-numeric';
import { parseTimestamp } from '../../platform/values/time';
import type { LotRow, OfferRow } from './leveling-sql';

// A lot's leveling and a project's totals from the rows: pure computation, no statement (the figures' arithmetic is
// in leveling-figures.ts).

/** A lot's figures the project sums, in cents; null without offers. */
export interface LotSums {
  budget: number;
  lowest: number | null;
  retained: number | null;
}

const deviation = (value: number, of: number) => ({ value: money(value - of), percent: percentOf(value - of, of, () => [sub(moneyNumeric(value), moneyNumeric(of)), moneyNumeric(of)]) });

/**
 * A lot's leveling from its lot row and its documents in order (offers first, from the lowest), with the
 * figures the project sums. Figures are computed on exact integers as PostgreSQL computes them from the
 * numerics (./leveling-figures, docs/leveling.md): each rounded once where the SQL expressions round; the
 * median of an even count is the mean of the two middle offers, kept exact for the comparisons and deviations.
 */
export function lotOf(r: LotRow, rows: readonly OfferRow[], threshold: ReturnType<typeof thresholdOf>, thresholdValue: number): { lot: TemplateLeveling; sums: LotSums } {
  const budget = cents(r.budget);
  const amounts: number[] = [];
  for (const d of rows) if (d.sub_total !== null) amounts.push(cents(d.sub_total) - cents(d.discount!));
  const offers = amounts.length;
  const lowest = offers ? amounts[0] : null;
  const highest = offers ? amounts[offers - 1] : null;
  const median = offers ? medianOf(amounts) : null;
  const selectedAt = r.selected_consultation_id === null ? -1 : rows.findIndex((d) => d.document_id === r.selected_consultation_id);
  const selectedOffered = selectedAt >= 0 && selectedAt < offers;
  const retained = selectedOffered ? amounts[selectedAt] : lowest;
  let abnormallyLow = 0;
  let rank = 0;
  const documents = rows.map((d, i): LevelingEntry => {
    const selected = d.document_id === r.selected_consultation_id;
    if (i >= offers) {
      return {
        documentId: d.document_id, contractorId: d.contractor_id, contractorName: d.contractor_name, state: d.state, intention: d.intention,
        offer: null, rank: null, deviationFromBudget: null, deviationFromLowest: null, deviationFromMedian: null,
        lowest: false, retained: false, selected, abnormallyLow: false,
      };
    }
    const amount = amounts[i];
    // Ranks as rank() gives them: equal offers share the rank of the first of them.
    if (i === 0 || amounts[i - 1] !== amount) rank = i + 1;
    const low = belowMedian(amount, median!, threshold);
    if (low) abnormallyLow++;
    const m = median!.halfCents;
    return {
      documentId: d.document_id, contractorId: d.contractor_id, contractorName: d.contractor_name, state: d.state, intention: d.intention,
      offer: {
        version: d.version!, sentAt: d.sent_at === null ? null : parseTimestamp(d.sent_at),
        subTotal: Number(d.sub_total), discount: Number(d.discount), amount: money(amount),
      },
      rank,
      deviationFromBudget: deviation(amount, budget),
      deviationFromLowest: deviation(amount, lowest!),
      deviationFromMedian: {
        value: money(halve(2 * amount - m)),
        percent: percentOf(2 * amount - m, m, () => {
          const med = median!.exact();
          return [sub(moneyNumeric(amount), med), med];
        }),
      },
      lowest: amount === lowest,
      retained: selectedOffered ? i === selectedAt : amount === lowest,
      selected,
      abnormallyLow: low,
    };
  });
  const lot: TemplateLeveling = {
    templateId: r.template_id!,
    name: lotName(r.trade_name, r.is_slice ? r.slice_name : null),
    tradeId: r.trade_id,
    tradeNumber: r.trade_number,
    isSlice: r.is_slice,
    slice: r.is_slice ? r.slice_name : null,
    selectedConsultationId: r.selected_consultation_id,
    abnormallyLowBelowMedianPercent: thresholdValue,
    summary: {
      documents: rows.length,
      offers,
      lowest: lowest === null ? null : money(lowest),
      highest: highest === null ? null : money(highest),
      median: median && money(halve(median.halfCents)),
      mean: offers ? meanOf(amounts) : null,
      spread: lowest === null ? null : deviation(highest!, lowest),
      budget: money(budget),
      retained: retained === null ? null : money(retained),
      retainedDeviation: retained === null ? null : deviation(retained, budget),
      abnormallyLow,
    },
    documents,
  };
  return { lot, sums: { budget, lowest, retained } };
}

/** `coalesce(sum(x), 0)` of cents, exactly whatever their number (BigInt), as a numeric(…,2). */
const sumOf = (values: readonly number[]): Numeric => ({ v: values.reduce((s, c) => s + BigInt(c), 0n), scale: 2 });
const totalDeviation = (value: Numeric, of: Numeric) => {
  const d = sub(value, of);
  return { value: toNumber(d), percent: toNumber(percent(d, of)) };
};

/** A project's totals from its lots' sums (decisions.md section 5: the retained offer, else nothing). */
export function totalsOf(sums: readonly LotSums[]): ProjectLeveling['totals'] {
  const offered = sums.filter((s) => s.lowest !== null);
  const budget = sumOf(sums.map((s) => s.budget));
  const lowest = sumOf(offered.map((s) => s.lowest!));
  const retained = sumOf(offered.map((s) => s.retained!));
  return {
    lots: sums.length,
    lotsWithOffers: offered.length,
    budget: toNumber(budget),
    offeredLotsBudget: toNumber(sumOf(offered.map((s) => s.budget))),
    lowest: toNumber(lowest),
    lowestDeviation: totalDeviation(lowest, budget),
    retained: toNumber(retained),
    retainedDeviation: totalDeviation(retained, budget),
  };
}
