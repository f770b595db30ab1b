/**
 * Small readers of a --json document's fields for the report's one-line figures: they take any
 * value and never throw, so a field the document lacks reads as "?" (a figure) or nothing (a
 * list). Pure.
 */
export type J = Record<string, unknown>;

export const isObj = (v: unknown): v is J => typeof v === 'object' && v !== null && !Array.isArray(v);
export const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
/** The objects of a list (none when it is not one). */
export const objs = (v: unknown): J[] => (Array.isArray(v) ? v.filter(isObj) : []);
/** The non-empty strings of a list (none when it is not one). */
export const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string' && s !== '') : []);
/** A figure as the terminal reports print it (12,345), or '?' when the field is missing. */
export const n = (v: unknown): string => (isNum(v) ? (Number.isInteger(v) ? v : Math.round(v * 10) / 10).toLocaleString('en-US') : '?');
/** A name or a number as it is, or '?'. */
export const s = (v: unknown): string => (typeof v === 'string' ? v : isNum(v) ? String(v) : '?');
/** The sum of one numeric field over a list (a missing one counts 0). */
export const sum = (list: readonly J[], field: string): number => list.reduce((a, x) => a + (isNum(x[field]) ? x[field] : 0), 0);
export const ms = (v: unknown): string => (isNum(v) ? `${n(Math.round(v))} ms` : '?');
/** How many claims held, of how many: "3/4". */
export const held = (checks: readonly J[]): string => `${checks.filter((c) => c.held === true).length}/${checks.length}`;

/** `list` grouped by `field`, the groups in first-seen order. */
export function groupBy(list: readonly J[], field: string): Map<string, J[]> {
  const out = new Map<string, J[]>();
  for (const x of list) {
    const key = s(x[field]);
    out.set(key, [...(out.get(key) ?? []), x]);
  }
  return out;
}
