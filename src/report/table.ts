import { columns, TEXT_COLUMNS, wrap, wrapLine } from './text-wrap.js';

/**
 * A plain-text table: readable without colour, right-aligned numbers. Pure. A table wider than
 * `width` is printed vertically instead (verticalTable), so it does not run off the terminal.
 */
export function renderTable(headers: readonly string[], rows: readonly (readonly (string | number)[])[], width = TEXT_COLUMNS): string {
  const cells = rows.map((r) => r.map((c) => String(c)));
  const widths = headers.map((h, i) => Math.max(columns(h), ...cells.map((r) => columns(r[i] ?? ''))));
  const numeric = headers.map(
    (_, i) => rows.length > 0 && rows.every((r) => typeof r[i] === 'number' || /^-?\d[\d,]*(\.\d+)?( ms| s| %)?$|^-$/.test(String(r[i]))),
  );
  const pad = (c: string, i: number): string => {
    const fill = ' '.repeat(Math.max(0, widths[i]! - columns(c)));
    return numeric[i] ? `${fill}${c}` : `${c}${fill}`;
  };
  const fmt = (r: readonly string[]): string => r.map(pad).join('  ').trimEnd();
  const lines = [fmt(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(fmt)];
  return lines.some((l) => columns(l) > width) ? verticalTable(headers, cells, width) : lines.join('\n');
}

/**
 * A table too wide for the terminal, a block per row: its first cell unindented, then the others
 * one per line, indented, each as `header: value` (the value alone under an empty header), long
 * values wrapped. A blank first cell means "as the row above" in the tables (rows of one group):
 * such a row goes on the block of the row above. Other blank cells are left out.
 */
function verticalTable(headers: readonly string[], rows: readonly (readonly string[])[], width: number): string {
  const field = (h: string | undefined, v: string): string => (h ? `${h}: ${v}` : v);
  const out: string[] = [];
  for (const r of rows) {
    if (r[0] !== undefined && r[0] !== '') out.push(wrapLine(field(headers[0], r[0]), width));
    r.forEach((v, i) => {
      if (i > 0 && v !== '') out.push(wrapLine(`  ${field(headers[i], v)}`, width));
    });
  }
  return out.join('\n');
}

/**
 * Name-value lines (`leader   rabbit1`), the names padded to one column; a long value is
 * wrapped, its continuation lines aligned under the values. Pure.
 */
export function renderFields(rows: readonly (readonly [string, string])[], width = TEXT_COLUMNS): string {
  const w = Math.max(0, ...rows.map(([k]) => columns(k)));
  const under = ' '.repeat(w + 2);
  return rows.map(([k, v]) => wrap(v, width, under, `${k}${' '.repeat(w - columns(k))}  `) || k).join('\n');
}
