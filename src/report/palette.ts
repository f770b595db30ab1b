/**
 * Colour, as the printers see it: a palette of paints passed in, never a terminal read here.
 * src/cli/colour.ts decides whether a stream gets colour and makes the coloured palette; every
 * printer takes text to text. Pure.
 */
export type Paint = (text: string) => string;

export interface Palette {
  /** A verdict or a check that passed. */
  readonly ok: Paint;
  /** A verdict or a check that failed. */
  readonly failed: Paint;
  /** An error line. */
  readonly error: Paint;
  /** A warning, a notice, a pass with warnings. */
  readonly warning: Paint;
}

const same: Paint = (text) => text;

/** No colour: what files, pipes and NO_COLOR get. */
export const PLAIN: Palette = { ok: same, failed: same, error: same, warning: same };

/**
 * The paint for a verdict line of a report (`verdict: OK (...)`, `verdict: FAILED: ...`, audit's
 * `verdict: PASS with warnings`, `thresholds: FAILED (...)`), or undefined for any other line.
 */
function verdictPaint(line: string, palette: Palette): Paint | undefined {
  if (/^verdict: PASS with warnings\b/.test(line)) return palette.warning;
  if (/^(verdict|thresholds): (OK|PASS)\b/.test(line)) return palette.ok;
  if (/^(verdict|thresholds): (FAILED|FAIL)\b/.test(line)) return palette.failed;
  return undefined;
}

/** A report with its verdict lines painted (OK green, FAILED red under a coloured palette); every other line as it was. */
export function paintReport(text: string, palette: Palette): string {
  if (palette === PLAIN) return text;
  return text
    .split('\n')
    .map((line) => verdictPaint(line, palette)?.(line) ?? line)
    .join('\n');
}
