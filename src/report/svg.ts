/**
 * Small, dependency-free SVG charts for the HTML reports: a line chart with event markers, a
 * dot timeline and a grouped bar chart. Pure functions from data to markup; every chart is an
 * <svg class="chart" data-chart="..."> so a browser test can find it.
 */

export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

export const PALETTE = ['#2563eb', '#16a34a', '#d97706', '#dc2626', '#7c3aed', '#0891b2', '#db2777', '#4b5563'];

const W = 920;
const H = 280;
const M = { left: 64, right: 150, top: 20, bottom: 40 };

export interface Series {
  name: string;
  points: readonly (readonly [number, number])[];
  color?: string;
  /** Plot against a second axis on the right (e.g. in-flight next to rates). */
  rightAxis?: boolean;
}

export interface Marker {
  x: number;
  label: string;
  color?: string;
}

/** A stretch of time shaded behind the series (a fault, from its issue until the cluster was whole again). */
export interface Band {
  from: number;
  to: number;
  label: string;
  color?: string;
}

/** Band labels: rows at the top of the plot, each label in the first row where it does not overlap the one before. */
const BAND_ROWS = 4;
const BAND_CHAR_PX = 6;

/** Shaded bands, clamped to [0, xMax], with staggered labels. Pure. */
/** The bands, and how many label rows they took at the top of the plot (markers label below them). */
function bandsMarkup(bands: readonly Band[], xMax: number, pw: number, ph: number): { markup: string; rows: number } {
  const rowEnds: number[] = Array.from({ length: BAND_ROWS }, () => Number.NEGATIVE_INFINITY);
  let rows = 0;
  const at = (v: number): number => M.left + (Math.min(xMax, Math.max(0, Number.isNaN(v) ? 0 : v)) / xMax) * pw;
  const markup = bands
    .map((b, i) => {
      const x1 = at(b.from);
      const x2 = Math.max(x1, at(b.to));
      const color = b.color ?? PALETTE[3]!;
      // A label near the right edge is moved left so that it stays inside the plot.
      const labelW = b.label.length * BAND_CHAR_PX;
      const labelX = Math.max(M.left, Math.min(x1 + 3, M.left + pw - labelW));
      let row = rowEnds.findIndex((end) => end <= labelX);
      if (row < 0) row = i % BAND_ROWS;
      rowEnds[row] = labelX + labelW + 4;
      rows = Math.max(rows, row + 1);
      const y = M.top + 10 + row * 12;
      return `<rect class="band" data-band="${escapeHtml(b.label)}" x="${x1.toFixed(1)}" y="${M.top}" width="${(x2 - x1).toFixed(1)}" height="${ph}" fill="${color}" fill-opacity="0.12"><title>${escapeHtml(b.label)}</title></rect><text class="tick band-label" x="${labelX.toFixed(1)}" y="${y}" fill="${color}">${escapeHtml(b.label)}</text>`;
    })
    .join('');
  return { markup, rows };
}

/** Round tick steps: 1, 2, 5 × 10^k. Pure. */
export function niceTicks(max: number, count = 5): number[] {
  if (!(max > 0) || !Number.isFinite(max)) return [0, 1];
  const raw = max / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((f) => f * mag).find((s) => s >= raw) ?? 10 * mag;
  const ticks: number[] = [];
  for (let v = 0; v <= max + step * 1e-9; v += step) ticks.push(Number(v.toPrecision(12)));
  if (ticks[ticks.length - 1]! < max) ticks.push(Number((ticks[ticks.length - 1]! + step).toPrecision(12)));
  return ticks;
}

function fmt(v: number): string {
  if (Math.abs(v) >= 1_000_000) return `${Number((v / 1_000_000).toPrecision(3))}M`;
  if (Math.abs(v) >= 10_000) return `${Number((v / 1000).toPrecision(3))}k`;
  return String(Number(v.toPrecision(4)));
}

/** `attrs`: more attributes of the <svg> (a line chart's data-x-max: its axis's end, in data units, for a browser test to check markers against). */
function frame(kind: string, title: string, body: string, attrs = ''): string {
  return `<figure><figcaption>${escapeHtml(title)}</figcaption><svg class="chart" data-chart="${escapeHtml(kind)}"${attrs} viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${escapeHtml(title)}">${body}</svg></figure>`;
}

function axes(xTicks: number[], xMax: number, yTicks: number[], yMax: number, xLabel: string, yLabel: string, fx: (x: number) => string = fmt): string {
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  const parts: string[] = [];
  for (const t of yTicks) {
    const y = M.top + ph - (t / yMax) * ph;
    parts.push(`<line class="grid" x1="${M.left}" x2="${M.left + pw}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}"/>`);
    parts.push(`<text class="tick" x="${M.left - 6}" y="${(y + 4).toFixed(1)}" text-anchor="end">${fmt(t)}</text>`);
  }
  for (const t of xTicks) {
    const x = M.left + (t / xMax) * pw;
    parts.push(`<text class="tick" x="${x.toFixed(1)}" y="${M.top + ph + 16}" text-anchor="middle">${fx(t)}</text>`);
  }
  parts.push(`<line class="axis" x1="${M.left}" x2="${M.left + pw}" y1="${M.top + ph}" y2="${M.top + ph}"/>`);
  parts.push(`<line class="axis" x1="${M.left}" x2="${M.left}" y1="${M.top}" y2="${M.top + ph}"/>`);
  parts.push(`<text class="label" x="${M.left + pw / 2}" y="${H - 6}" text-anchor="middle">${escapeHtml(xLabel)}</text>`);
  parts.push(`<text class="label" transform="translate(14 ${M.top + ph / 2}) rotate(-90)" text-anchor="middle">${escapeHtml(yLabel)}</text>`);
  return parts.join('');
}

function legend(items: readonly { name: string; color: string; dashed?: boolean }[]): string {
  return items
    .map((it, i) => {
      const y = M.top + 10 + i * 18;
      const x = W - M.right + 14;
      return `<g class="legend-item"><line x1="${x}" x2="${x + 18}" y1="${y}" y2="${y}" stroke="${it.color}" stroke-width="3"${it.dashed ? ' stroke-dasharray="4 3"' : ''}/><text class="tick" x="${x + 24}" y="${y + 4}">${escapeHtml(it.name)}</text></g>`;
    })
    .join('');
}

/** Lines over time with vertical event markers (fault, election, restore) and shaded bands beneath. Pure. */
export function lineChart(o: {
  title: string;
  series: readonly Series[];
  markers?: readonly Marker[];
  /** Drawn beneath the series; the x range reaches the last band's end. */
  bands?: readonly Band[];
  xLabel: string;
  yLabel: string;
  yRightLabel?: string;
}): string {
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  const all = o.series.flatMap((s) => s.points);
  // The range covers the data, every marker (a node that rejoined long after the producer finished)
  // and every band: each event lies inside the plot.
  const xMaxData = all.length > 0 ? Math.max(0.001, ...all.map((p) => p[0])) : 1;
  const bands = o.bands ?? [];
  const xMaxRaw = Math.max(
    xMaxData,
    ...(o.markers ?? []).map((m) => m.x).filter((v) => Number.isFinite(v)),
    ...bands.map((b) => b.to).filter((v) => Number.isFinite(v)),
  );
  const xTicks = niceTicks(xMaxRaw);
  const xMax = xTicks[xTicks.length - 1]!;
  const left = o.series.filter((s) => !s.rightAxis);
  const right = o.series.filter((s) => s.rightAxis);
  const yTicks = niceTicks(Math.max(1, ...left.flatMap((s) => s.points.map((p) => p[1]))));
  const yMax = yTicks[yTicks.length - 1]!;
  const rTicks = niceTicks(Math.max(1, ...right.flatMap((s) => s.points.map((p) => p[1]))));
  const rMax = rTicks[rTicks.length - 1]!;
  const parts: string[] = [axes(xTicks, xMax, yTicks, yMax, o.xLabel, o.yLabel)];
  if (right.length > 0) {
    for (const t of rTicks) {
      const y = M.top + ph - (t / rMax) * ph;
      parts.push(`<text class="tick right" x="${M.left + pw + 6}" y="${(y + 4).toFixed(1)}">${fmt(t)}</text>`);
    }
  }
  const bandRows = bands.length > 0 ? bandsMarkup(bands, xMax, pw, ph) : { markup: '', rows: 0 };
  parts.push(bandRows.markup);
  const colors = o.series.map((s, i) => s.color ?? PALETTE[i % PALETTE.length]!);
  o.series.forEach((s, i) => {
    const max = s.rightAxis ? rMax : yMax;
    const pts = s.points.map(([x, y]) => `${(M.left + (x / xMax) * pw).toFixed(1)},${(M.top + ph - (y / max) * ph).toFixed(1)}`).join(' ');
    parts.push(
      `<polyline class="series" data-series="${escapeHtml(s.name)}" fill="none" stroke="${colors[i]}" stroke-width="2"${s.rightAxis ? ' stroke-dasharray="4 3"' : ''} points="${pts}"/>`,
    );
  });
  (o.markers ?? []).forEach((m, i) => {
    const x = M.left + (Math.max(0, Math.min(m.x, xMax)) / xMax) * pw;
    // A label in the right third of the plot ends at its line instead of starting there: it stays inside.
    const rightSide = x > M.left + (2 * pw) / 3;
    const color = m.color ?? '#111827';
    parts.push(
      `<g class="marker" data-marker="${escapeHtml(m.label)}" data-x="${Number(m.x.toFixed(4))}"><line x1="${x.toFixed(1)}" x2="${x.toFixed(1)}" y1="${M.top}" y2="${M.top + ph}" stroke="${color}" stroke-dasharray="3 3"/><text class="tick" x="${(rightSide ? x - 3 : x + 3).toFixed(1)}" y="${M.top + 10 + (bandRows.rows + (i % 4)) * 12}" fill="${color}"${rightSide ? ' text-anchor="end"' : ''}>${escapeHtml(m.label)}</text></g>`,
    );
  });
  const legendItems = o.series.map((s, i) => ({
    name: s.rightAxis && o.yRightLabel ? `${s.name} (right)` : s.name,
    color: colors[i]!,
    dashed: s.rightAxis === true,
  }));
  parts.push(legend(legendItems));
  return frame('line', o.title, parts.join(''), ` data-x-max="${xMax}"`);
}

/** One row per lane (e.g. a message), a dot per event at its time. Pure. */
export function dotTimeline(o: {
  title: string;
  lanes: readonly { name: string; dots: readonly { x: number; label: string; color?: string }[] }[];
  xLabel: string;
  /** Lane names up to this many characters are shown whole (the plot starts further right); longer ones are cut. Default 10. */
  laneChars?: number;
}): string {
  const laneChars = o.laneChars ?? 10;
  const left = o.laneChars === undefined ? M.left : Math.max(M.left, laneChars * 6.5 + 12);
  const pw = W - left - M.right;
  const xMaxRaw = Math.max(1, ...o.lanes.flatMap((l) => l.dots.map((d) => d.x)));
  const xTicks = niceTicks(xMaxRaw);
  const xMax = xTicks[xTicks.length - 1]!;
  const laneH = Math.max(18, Math.min(48, (H - M.top - M.bottom) / Math.max(1, o.lanes.length)));
  const height = M.top + M.bottom + laneH * o.lanes.length;
  const parts: string[] = [];
  for (const t of xTicks) {
    const x = left + (t / xMax) * pw;
    parts.push(`<line class="grid" x1="${x.toFixed(1)}" x2="${x.toFixed(1)}" y1="${M.top}" y2="${height - M.bottom}"/>`);
    parts.push(`<text class="tick" x="${x.toFixed(1)}" y="${height - M.bottom + 16}" text-anchor="middle">${fmt(t)}</text>`);
  }
  parts.push(`<text class="label" x="${left + pw / 2}" y="${height - 6}" text-anchor="middle">${escapeHtml(o.xLabel)}</text>`);
  o.lanes.forEach((lane, i) => {
    const y = M.top + laneH * i + laneH / 2;
    parts.push(
      `<text class="tick" x="${left - 6}" y="${(y + 4).toFixed(1)}" text-anchor="end">${escapeHtml(lane.name.length > laneChars ? `…${lane.name.slice(-(laneChars - 1))}` : lane.name)}</text>`,
    );
    parts.push(`<line class="axis" x1="${left}" x2="${left + pw}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}"/>`);
    for (const d of lane.dots) {
      const x = left + (d.x / xMax) * pw;
      parts.push(
        `<circle class="dot" cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="5" fill="${d.color ?? PALETTE[0]}"><title>${escapeHtml(d.label)}</title></circle>`,
      );
    }
  });
  return `<figure><figcaption>${escapeHtml(o.title)}</figcaption><svg class="chart" data-chart="timeline" viewBox="0 0 ${W} ${height}" width="${W}" height="${height}" role="img" aria-label="${escapeHtml(o.title)}">${parts.join('')}</svg></figure>`;
}

/** Bars per category, one per series, side by side. Pure. */
export function barChart(o: {
  title: string;
  categories: readonly string[];
  series: readonly { name: string; values: readonly number[]; color?: string }[];
  yLabel: string;
}): string {
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  const yTicks = niceTicks(Math.max(1, ...o.series.flatMap((s) => s.values.filter((v) => Number.isFinite(v)))));
  const yMax = yTicks[yTicks.length - 1]!;
  const parts: string[] = [];
  for (const t of yTicks) {
    const y = M.top + ph - (t / yMax) * ph;
    parts.push(`<line class="grid" x1="${M.left}" x2="${M.left + pw}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}"/>`);
    parts.push(`<text class="tick" x="${M.left - 6}" y="${(y + 4).toFixed(1)}" text-anchor="end">${fmt(t)}</text>`);
  }
  parts.push(`<line class="axis" x1="${M.left}" x2="${M.left + pw}" y1="${M.top + ph}" y2="${M.top + ph}"/>`);
  parts.push(`<text class="label" transform="translate(14 ${M.top + ph / 2}) rotate(-90)" text-anchor="middle">${escapeHtml(o.yLabel)}</text>`);
  const groupW = pw / Math.max(1, o.categories.length);
  const barW = Math.max(2, (groupW * 0.8) / Math.max(1, o.series.length));
  const colors = o.series.map((s, i) => s.color ?? PALETTE[i % PALETTE.length]!);
  o.categories.forEach((c, ci) => {
    const gx = M.left + groupW * ci + groupW * 0.1;
    o.series.forEach((s, si) => {
      const v = s.values[ci] ?? 0;
      const h = Number.isFinite(v) ? (v / yMax) * ph : 0;
      const x = gx + barW * si;
      parts.push(
        `<rect class="bar" data-series="${escapeHtml(s.name)}" data-category="${escapeHtml(c)}" x="${x.toFixed(1)}" y="${(M.top + ph - h).toFixed(1)}" width="${(barW - 1).toFixed(1)}" height="${h.toFixed(1)}" fill="${colors[si]}"><title>${escapeHtml(`${c} ${s.name}: ${fmt(v)}`)}</title></rect>`,
      );
    });
    parts.push(`<text class="tick" x="${(gx + (barW * o.series.length) / 2).toFixed(1)}" y="${M.top + ph + 16}" text-anchor="middle">${escapeHtml(c)}</text>`);
  });
  parts.push(legend(o.series.map((s, i) => ({ name: s.name, color: colors[i]! }))));
  return frame('bar', o.title, parts.join(''));
}
