/** A plain-text table: readable without colour, right-aligned numbers. Pure. */
export function renderTable(headers: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const cells = rows.map((r) => r.map((c) => String(c)));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] ?? '').length)));
  const numeric = headers.map(
    (_, i) => rows.length > 0 && rows.every((r) => typeof r[i] === 'number' || /^-?\d[\d,]*(\.\d+)?( ms| s| %)?$|^-$/.test(String(r[i]))),
  );
  const fmt = (r: readonly string[]): string =>
    r
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [fmt(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(fmt)].join('\n');
}
