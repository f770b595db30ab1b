import { Chalk } from 'chalk';
import { PLAIN, type Palette } from '../report/palette.js';

/**
 * Whether a stream gets colour, the one rule for every output (reports, error lines, the
 * spinner): NO_COLOR set and not empty says never (no-color.org), and so does the global
 * --no-color, which sets it; FORCE_COLOR=0 (or false) says never, any other FORCE_COLOR always
 * (a pipe into `less -R`); otherwise a TTY that can (Node's hasColors, which reads TERM). NO_COLOR
 * wins over FORCE_COLOR: --no-color on the command line is the most specific word. Pure.
 */
export function colourWanted(stream: { isTTY?: boolean; hasColors?: (env?: NodeJS.ProcessEnv) => boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR === '0' || env.FORCE_COLOR === 'false') return false;
  if (env.FORCE_COLOR !== undefined) return true;
  return stream.isTTY === true && (stream.hasColors?.(env) ?? false);
}

/** The 16 basic colours: every terminal that has colour has these. */
const chalk = new Chalk({ level: 1 });

/** Verdicts green or red, errors red, warnings yellow. */
export const COLOURED: Palette = { ok: chalk.green, failed: chalk.red, error: chalk.red, warning: chalk.yellow };

/** The palette for what goes to `stream`: COLOURED where colourWanted says so, PLAIN elsewhere. */
export function paletteFor(stream: { isTTY?: boolean; hasColors?: (env?: NodeJS.ProcessEnv) => boolean }, env: NodeJS.ProcessEnv = process.env): Palette {
  return colourWanted(stream, env) ? COLOURED : PLAIN;
}

/** A line (its newline kept outside the colour codes) painted. */
export function paintLine(paint: (s: string) => string, line: string): string {
  return line.endsWith('\n') ? `${paint(line.slice(0, -1))}\n` : paint(line);
}
