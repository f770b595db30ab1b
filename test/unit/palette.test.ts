import { describe, expect, it } from 'vitest';
import { COLOURED, paintLine, paletteFor } from '../../src/cli/colour.js';
import { PLAIN, paintReport } from '../../src/report/palette.js';

const ESC = String.fromCharCode(27);
const GREEN = (s: string): string => `${ESC}[32m${s}${ESC}[39m`;
const RED = (s: string): string => `${ESC}[31m${s}${ESC}[39m`;
const YELLOW = (s: string): string => `${ESC}[33m${s}${ESC}[39m`;

describe('paintReport: verdict lines painted, every other line as it was', () => {
  const table = 'mode          lost\nconfirms-off  12';
  const cases: { name: string; text: string; coloured: string }[] = [
    { name: 'OK: green', text: `${table}\nverdict: OK (no confirmed message lost)`, coloured: `${table}\n${GREEN('verdict: OK (no confirmed message lost)')}` },
    { name: 'FAILED: red', text: `${table}\nverdict: FAILED: lost 12`, coloured: `${table}\n${RED('verdict: FAILED: lost 12')}` },
    { name: "audit's PASS: green", text: 'verdict: PASS (0 fail, 0 warn, 9 pass)', coloured: GREEN('verdict: PASS (0 fail, 0 warn, 9 pass)') },
    { name: "audit's FAIL: red", text: 'verdict: FAIL (1 fail)', coloured: RED('verdict: FAIL (1 fail)') },
    { name: 'PASS with warnings: yellow', text: 'verdict: PASS with warnings (2 warn)', coloured: YELLOW('verdict: PASS with warnings (2 warn)') },
    { name: 'no verdict line: unchanged', text: table, coloured: table },
    { name: 'verdict: in the middle of a line: unchanged', text: 'the verdict: OK', coloured: 'the verdict: OK' },
    { name: 'a word that starts like one: unchanged', text: 'verdict: OKAY', coloured: 'verdict: OKAY' },
  ];
  it.each(cases)('$name: coloured palette', ({ text, coloured }) => expect(paintReport(text, COLOURED)).toBe(coloured));
  it.each(cases)('$name: plain palette leaves it alone', ({ text }) => expect(paintReport(text, PLAIN)).toBe(text));
});

describe('paletteFor: coloured only where colour is wanted', () => {
  const tty = { isTTY: true, hasColors: () => true };
  const cases: { name: string; stream: { isTTY?: boolean; hasColors?: () => boolean }; env: NodeJS.ProcessEnv; coloured: boolean }[] = [
    { name: 'a terminal', stream: tty, env: {}, coloured: true },
    { name: 'a pipe', stream: { isTTY: false }, env: {}, coloured: false },
    { name: 'a terminal, NO_COLOR=1 (or --no-color)', stream: tty, env: { NO_COLOR: '1' }, coloured: false },
    { name: 'a pipe, FORCE_COLOR=1', stream: { isTTY: false }, env: { FORCE_COLOR: '1' }, coloured: true },
  ];
  it.each(cases)('$name', ({ stream, env, coloured }) => expect(paletteFor(stream, env)).toBe(coloured ? COLOURED : PLAIN));
});

describe('paintLine: the newline stays outside the codes', () => {
  it.each([
    ['rmq-bench: no broker\n', `${RED('rmq-bench: no broker')}\n`],
    ['rmq-bench: no broker', RED('rmq-bench: no broker')],
  ])('%j', (line, painted) => expect(paintLine(COLOURED.error, line)).toBe(painted));
});
