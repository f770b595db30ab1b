import { describe, expect, it } from 'vitest';
import { renderFields, renderTable } from '../../src/report/table.js';
import { columns, fitColumns, fitLines, TEXT_COLUMNS, wrap, wrapLine } from '../../src/report/text-wrap.js';
import { blockLines, tableRow, unwrapped } from './fixtures/text.js';

const words = (n: number, w = 'word'): string => Array.from({ length: n }, (_, i) => `${w}${i}`).join(' ');

describe('wrap', () => {
  it.each<{ name: string; text: string; width: number; indent: string; first?: string; expected: string[] }>([
    { name: 'fits: one line', text: 'a short line', width: 20, indent: '', expected: ['a short line'] },
    { name: 'breaks between words, never inside one', text: 'aaa bbb ccc ddd', width: 8, indent: '', expected: ['aaa bbb', 'ccc ddd'] },
    { name: 'exactly the width fits', text: 'aaa bbb', width: 7, indent: '', expected: ['aaa bbb'] },
    { name: 'every line indented (the audit form)', text: 'aaa bbb ccc', width: 9, indent: '  ', expected: ['  aaa bbb', '  ccc'] },
    { name: 'a first prefix apart from the indent', text: 'aaa bbb ccc', width: 9, indent: '    ', first: 'x: ', expected: ['x: aaa', '    bbb', '    ccc'] },
    { name: 'a word longer than a line stands alone', text: 'a 0123456789abc b', width: 8, indent: '', expected: ['a', '0123456789abc', 'b'] },
    { name: 'runs of spaces become one', text: 'a   b\tc', width: 20, indent: '', expected: ['a b c'] },
    { name: 'code points, not UTF-16 units: → and × are one column', text: '→→→ ××× →→→', width: 7, indent: '', expected: ['→→→ ×××', '→→→'] },
    { name: 'a unit stays with its figure', text: 'at 1.84 s; after 500 ms', width: 10, indent: '', expected: ['at 1.84 s;', 'after', '500 ms'] },
    { name: 'a word that only looks like a unit breaks as any other', text: 'its s is', width: 4, indent: '', expected: ['its', 's is'] },
    { name: 'empty text: no line', text: '  ', width: 10, indent: '  ', expected: [''] },
  ])('$name', ({ text, width, indent, first, expected }) => {
    expect(wrap(text, width, indent, first).split('\n')).toEqual(expected);
  });
});

describe('wrapLine and fitColumns', () => {
  it.each<{ name: string; line: string; width: number; expected: string[] }>([
    { name: 'a line that fits keeps its spacing', line: 'a    b  c', width: 9, expected: ['a    b  c'] },
    { name: 'continuations four deeper than the line', line: 'aaa bbb ccc ddd', width: 8, expected: ['aaa bbb', '    ccc', '    ddd'] },
    { name: 'an indented line keeps its indent', line: '  aaa bbb ccc', width: 10, expected: ['  aaa bbb', '      ccc'] },
  ])('$name', ({ line, width, expected }) => {
    expect(wrapLine(line, width).split('\n')).toEqual(expected);
  });

  it('fitColumns: each line on its own; fitLines: a block of several lines (a table) kept as it is', () => {
    const long = `head: ${words(30)}`;
    const table = `${'x'.repeat(130)}\n${'-'.repeat(130)}`;
    expect(fitColumns(`${long}\nshort`).split('\n').at(-1)).toBe('short');
    for (const l of fitColumns(long).split('\n')) expect(columns(l)).toBeLessThanOrEqual(TEXT_COLUMNS);
    expect(fitLines([long, table]).endsWith(table)).toBe(true);
    expect(unwrapped(fitLines([long, '', '  sub: line']))).toBe(`${long}\n\n  sub: line`);
  });
});

describe('renderTable: vertical when wider than the terminal', () => {
  const claim = 'an alarm on one node (rabbit1) blocks publishing connections on every node, publishers and consumers alike';
  const measured = 'connection.blocked on rabbit1, rabbit2 and rabbit3 within 0.05 s of the alarm; the consumer connection stayed unblocked';

  it.each<{ name: string; headers: string[]; rows: (string | number)[][]; width?: number; expected: string[] }>([
    {
      name: 'a block per row: the first cell, then `header: value` lines',
      headers: ['claim', 'measured', 'held'],
      rows: [['a', 'b'.repeat(20), 'yes']],
      width: 32,
      expected: ['claim: a', '  measured: bbbbbbbbbbbbbbbbbbbb', '  held: yes'],
    },
    {
      name: 'a blank first cell goes on the block above; other blank cells are left out',
      headers: ['set by', 'claim', 'note'],
      rows: [
        ['policy', 'c1', ''],
        ['', 'c2', 'n2'],
        ['queue', 'c3', 'n3'],
      ],
      width: 18,
      expected: ['set by: policy', '  claim: c1', '  claim: c2', '  note: n2', 'set by: queue', '  claim: c3', '  note: n3'],
    },
    {
      name: 'an empty header: the value alone',
      headers: ['', 'confirms on'],
      rows: [['attempted', 5000]],
      width: 20,
      expected: ['attempted', '  confirms on: 5000'],
    },
  ])('$name', ({ headers, rows, width, expected }) => {
    expect(renderTable(headers, rows, width).split('\n')).toEqual(expected);
  });

  it('a long value wrapped four deeper than its field', () => {
    const lines = renderTable(['claim', 'measured'], [['c', words(30)]]).split('\n');
    expect(lines.slice(0, 2).map((l) => l.slice(0, 14))).toEqual(['claim: c', '  measured: wo']);
    expect(lines[2]).toMatch(/^ {6}word\d/);
    for (const l of lines) expect(columns(l)).toBeLessThanOrEqual(TEXT_COLUMNS);
    expect(unwrapped(lines.join('\n'))).toBe(`claim: c\n  measured: ${words(30)}`);
  });

  it('a table that fits stays a table, however long its cells', () => {
    const text = renderTable(['claim', 'held'], [[claim, 'yes']]);
    expect(text.split('\n')).toHaveLength(3);
    expect(text.split('\n')[2]).toBe(`${claim}  yes`);
  });

  it('a claims table of real length: every line within the width, each row readable back', () => {
    const text = renderTable(
      ['claim', 'measured', 'held'],
      [
        [claim, measured, 'yes'],
        ['a connection that only consumes is not blocked: consumers go on, and can free the memory', measured, 'NO'],
      ],
    );
    for (const l of text.split('\n')) expect(columns(l), l).toBeLessThanOrEqual(TEXT_COLUMNS);
    expect(tableRow(text, claim)).toEqual([claim, measured, 'yes']);
    expect(blockLines(text).split('\n')).toHaveLength(2);
  });
});

describe('renderFields', () => {
  it.each<{ name: string; rows: [string, string][]; width?: number; expected: string[] }>([
    {
      name: 'names padded to one column',
      rows: [
        ['leader', 'rabbit1'],
        ['new leader', 'rabbit2'],
      ],
      expected: ['leader      rabbit1', 'new leader  rabbit2'],
    },
    {
      name: 'a long value wrapped under the values',
      rows: [
        ['a', 'b'],
        ['rejoin', 'one two three four'],
      ],
      width: 16,
      expected: ['a       b', 'rejoin  one two', '        three', '        four'],
    },
  ])('$name', ({ rows, width, expected }) => {
    expect(renderFields(rows, width).split('\n')).toEqual(expected);
  });
});
