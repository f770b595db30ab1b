/**
 * How wide a terminal report may be, and the word-wrapping that keeps it so: every printer's
 * prose and every table (table.ts) fits TEXT_COLUMNS, so a report reads without scrolling in a
 * terminal and pasted into docs/ (docs.test.ts holds the docs' fenced blocks to the same width).
 * Widths count code points (→, × and ✓ are one column each). Pure.
 */

/** The widest a line of a terminal report may be. */
export const TEXT_COLUMNS = 120;

/** A line's width in columns. */
export function columns(line: string): number {
  return [...line].length;
}

/** A unit after a figure ("1.84 s;", "500 ms", "12 %"): kept on the figure's line. */
const UNIT = /^(?:ms|s|%|µs|MB|msg\/s)[,;:.)]*$/;

/** A paragraph's words, each unit glued to the figure before it. */
function wordsOf(text: string): string[] {
  const words: string[] = [];
  for (const w of text.split(/\s+/).filter(Boolean)) {
    const prev = words.at(-1);
    if (prev !== undefined && UNIT.test(w) && /\d$/.test(prev)) words[words.length - 1] = `${prev} ${w}`;
    else words.push(w);
  }
  return words;
}

/**
 * Word-wrap a paragraph into lines at most `width` wide: the first line starts with `first`, the
 * others with `indent`. Runs of spaces become one; a unit stays with its figure. A word longer
 * than a line stands on its own line.
 */
export function wrap(text: string, width = TEXT_COLUMNS, indent = '', first = indent): string {
  const words = wordsOf(text);
  const lines: string[] = [];
  let line = '';
  for (const w of words) {
    const prefix = lines.length === 0 ? first : indent;
    if (line !== '' && columns(prefix) + columns(line) + 1 + columns(w) > width) {
      lines.push(`${prefix}${line}`);
      line = w;
    } else {
      line = line === '' ? w : `${line} ${w}`;
    }
  }
  if (line !== '') lines.push(`${lines.length === 0 ? first : indent}${line}`);
  return lines.join('\n');
}

/**
 * How much deeper than its line a wrapped line's continuation starts: deeper than the two spaces
 * the printers indent a line under another with, so that a continuation is not read as one.
 */
export const CONTINUATION = '    ';

/**
 * One line of a report at most `width` wide: as it is when it fits (its spacing kept), else
 * wrapped at its words, its leading spaces kept and the continuation lines CONTINUATION deeper.
 */
export function wrapLine(line: string, width = TEXT_COLUMNS): string {
  if (columns(line) <= width) return line;
  const lead = /^ */.exec(line)![0];
  return wrap(line, width, `${lead}${CONTINUATION}`, lead);
}

/** Every line of a report at most `width` wide (wrapLine on each). For prose: tables fit by themselves (renderTable). */
export function fitColumns(text: string, width = TEXT_COLUMNS): string {
  return text
    .split('\n')
    .map((l) => wrapLine(l, width))
    .join('\n');
}

/**
 * A report's lines: each item a line of prose, wrapped (wrapLine), or a block of several lines
 * (a table), kept as it is. Pure.
 */
export function fitLines(items: readonly string[], width = TEXT_COLUMNS): string {
  return items.map((i) => (i.includes('\n') ? i : wrapLine(i, width))).join('\n');
}
