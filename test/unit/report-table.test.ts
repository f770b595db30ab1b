import { describe, expect, it } from 'vitest';
import { renderTable } from '../../src/report/table.js';

describe('renderTable', () => {
  const cases: { name: string; headers: string[]; rows: (string | number)[][]; expected: string[] }[] = [
    {
      name: 'text left, numbers right, widths from the widest cell',
      headers: ['queue', 'messages'],
      rows: [
        ['demo.orders', 1200],
        ['demo.retry', 5],
      ],
      expected: ['queue        messages', '-----------  --------', 'demo.orders      1200', 'demo.retry          5'],
    },
    {
      name: "formatted figures and '-' count as numbers",
      headers: ['run', 'p99', 'loss', 'sent'],
      rows: [
        ['no confirms', '12 ms', '0.5 %', '1,000'],
        ['confirms', '-', '0 %', '-'],
      ],
      expected: [
        'run            p99   loss   sent',
        '-----------  -----  -----  -----',
        'no confirms  12 ms  0.5 %  1,000',
        'confirms         -    0 %      -',
      ],
    },
    {
      name: 'one text cell makes the whole column text',
      headers: ['node', 'version'],
      rows: [
        ['rabbit1', '4.3.6'],
        ['rabbit2', 7],
      ],
      expected: ['node     version', '-------  -------', 'rabbit1  4.3.6', 'rabbit2  7'],
    },
    {
      name: 'a header wider than its cells; no trailing spaces',
      headers: ['n', 'state'],
      rows: [['rabbit1', 'up']],
      expected: ['n        state', '-------  -----', 'rabbit1  up'],
    },
    {
      name: 'no rows: headers and rule only',
      headers: ['quorum queue', 'leader'],
      rows: [],
      expected: ['quorum queue  leader', '------------  ------'],
    },
  ];

  it.each(cases)('$name', ({ headers, rows, expected }) => {
    expect(renderTable(headers, rows).split('\n')).toEqual(expected);
  });
});
