import { median } from '../measure/median.js';
import { barChart, escapeHtml, type Series } from './svg.js';

/**
 * What the chart builders of several kinds share (src/report/svg.ts draws; these shape data for
 * it): the counts table, rates from cumulative samples, the per-run loss charts, a timeline lane
 * per message. Pure.
 */

/** `cls`: another class beside "counts" (chaos's nemesis history: left-aligned, unwrapped text). */
export function countsTable(headers: readonly string[], rows: readonly (readonly (string | number)[])[], cls = ''): string {
  const th = headers.map((h) => `<th>${escapeHtml(h)}</th>`).join('');
  const trs = rows.map((r) => `<tr>${r.map((c) => `<td>${escapeHtml(typeof c === 'number' ? c.toLocaleString('en-US') : c)}</td>`).join('')}</tr>`).join('');
  return `<table class="counts${cls === '' ? '' : ` ${cls}`}"><thead><tr>${th}</tr></thead><tbody>${trs}</tbody></table>`;
}

/** Per-second rates from cumulative counter samples (a producer's, chaos's), at each sample's time in seconds. Pure. */
export function ratesFrom<K extends string>(samples: readonly ({ readonly tMs: number } & { readonly [k in K]: number })[], field: K): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1]!;
    const b = samples[i]!;
    const dt = b.tMs - a.tMs;
    if (dt <= 0) continue;
    out.push([b.tMs / 1000, ((b[field] - a[field]) * 1000) / dt]);
  }
  return out;
}

/** The in-flight count of each sample, at its time in seconds, on the right axis. Pure. */
export function inFlightSeries(samples: readonly { readonly tMs: number; readonly inFlight: number }[]): Series {
  return { name: 'in flight', points: samples.map((s): [number, number] => [s.tMs / 1000, s.inFlight]), rightAxis: true };
}

const fmtCount = (n: number): string => (Number.isInteger(n) ? n.toLocaleString('en-US') : n.toLocaleString('en-US', { maximumFractionDigits: 1 }));

/**
 * How a count varied from run to run (the reason --runs exists): a bar per run and measure, the
 * median of each in the title. Nothing for a single run. Pure.
 */
export function lossPerRunChart(
  title: string,
  runs: readonly { run: number }[],
  measures: readonly { name: string; of: (i: number) => number; color?: string }[],
): string[] {
  if (runs.length < 2) return [];
  const medians = measures.map((m) => `${m.name} ${fmtCount(median(runs.map((_, i) => m.of(i))))}`).join(', ');
  return [
    barChart({
      title: `${title}, per run (median: ${medians})`,
      categories: runs.map((r) => `run ${r.run}`),
      series: measures.map((m) => ({ name: m.name, values: runs.map((_, i) => m.of(i)), ...(m.color ? { color: m.color } : {}) })),
      yLabel: 'messages',
    }),
  ];
}

/** The modes of a run list, in first-seen order. */
export const modesOf = (runs: readonly { mode: string }[]): string[] => [...new Set(runs.map((r) => r.mode))];

/** lossPerRunChart for each mode's runs (`${mode}: ${what}`), with the mode; no chart for a mode of one run. Pure. */
export function lossPerRunByMode<R extends { mode: string; run: number }>(
  runs: readonly R[],
  what: string,
  measures: readonly { name: string; of: (r: R) => number; color?: string }[],
): { mode: string; charts: string[] }[] {
  return modesOf(runs).map((mode) => {
    const mine = runs.filter((r) => r.mode === mode);
    return {
      mode,
      charts: lossPerRunChart(
        `${mode}: ${what}`,
        mine,
        measures.map((m) => ({ ...m, of: (i: number) => m.of(mine[i]!) })),
      ),
    };
  });
}

/** The crash demos' per-run charts: lossPerRunByMode, each mode's under its own heading (none for a mode of one run). Pure. */
export function lossPerRunSections<R extends { mode: string; run: number }>(
  runs: readonly R[],
  what: string,
  measures: readonly { name: string; of: (r: R) => number; color?: string }[],
): string[] {
  return lossPerRunByMode(runs, what, measures).flatMap(({ mode, charts }) =>
    charts.length > 0 ? [`<h2>Loss per run: ${escapeHtml(mode)}</h2>`, ...charts] : [],
  );
}

/** A timeline lane per message id, in the order given, each with the items of that id as dots. Pure. */
export function lanesByMessage<T extends { messageId: string }>(
  ids: readonly string[],
  items: readonly T[],
  dot: (item: T) => { x: number; label: string; color?: string },
): { name: string; dots: { x: number; label: string; color?: string }[] }[] {
  return ids.map((id) => ({ name: id, dots: items.filter((a) => a.messageId === id).map(dot) }));
}
