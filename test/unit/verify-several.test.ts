import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ledgerFiles, queueToDrain, readLedger } from '../../src/cli/commands/verify.js';
import { DataError, NotFoundError, UsageError } from '../../src/errors.js';
import { Ledger, UNEXPECTED_SAMPLE_LIMIT } from '../../src/ledger/ledger.js';
import { reconcile } from '../../src/ledger/reconcile.js';
import { duplicateRunIds, LedgerRouter, type LedgerRow, totalOf } from '../../src/ledger/several.js';
import { shapeMismatches } from '../../src/report/doc-shape.js';
import { toJsonDocument } from '../../src/report/json.js';
import { ledgerNames } from '../../src/report/kinds/verify/text.js';
import { verify } from '../../src/report/kinds/verify/view.js';
import { type Group, recordGroups } from './fixtures/ledger.js';
import { unwrapped } from './fixtures/text.js';
import { invocationOf } from './program-harness.js';

/** A ledger of run `runId` whose messages went through `groups` (fixtures/ledger.ts), with no reads yet. */
function ledgerOf(runId: string, groups: Group[]): Ledger {
  const ledger = new Ledger({ runId, capacity: 8 });
  recordGroups(ledger, groups, () => undefined);
  return ledger;
}

describe('LedgerRouter: each read to the ledger of its run id', () => {
  const cases: {
    name: string;
    runs: string[];
    reads: (string | undefined)[];
    /** Per run: its reads of its own ids, and its unexpected reads. */
    perRun: Record<string, { readTotal: number; unexpected: number }>;
    foreign: { count: number; samples: string[] };
  }[] = [
    {
      name: 'one ledger: every read is its own, an id of another run its unexpected read (as recordRead has it)',
      runs: ['a'],
      reads: ['a-0', 'a-1', 'b-0', undefined, 'a-1'],
      perRun: { a: { readTotal: 3, unexpected: 2 } },
      foreign: { count: 0, samples: [] },
    },
    {
      name: 'two ledgers: by run id; an id of neither run, none at all, or not an id is foreign, counted in no ledger',
      runs: ['a', 'b'],
      reads: ['a-0', 'b-1', 'b-0', 'c-0', undefined, 'garbage', 'a-2'],
      perRun: { a: { readTotal: 2, unexpected: 0 }, b: { readTotal: 2, unexpected: 0 } },
      foreign: { count: 3, samples: ['c-0', '(no message_id)', 'garbage'] },
    },
    {
      name: "an id of a ledger's run with a sequence it never attempted: that ledger's unexpected read",
      runs: ['a', 'b'],
      reads: ['a-99', 'b-3'],
      perRun: { a: { readTotal: 0, unexpected: 1 }, b: { readTotal: 0, unexpected: 1 } },
      foreign: { count: 0, samples: [] },
    },
    {
      name: "a non-canonical sequence ('a-01') names no run: foreign",
      runs: ['a', 'b'],
      reads: ['a-01', 'b-1e0'],
      perRun: { a: { readTotal: 0, unexpected: 0 }, b: { readTotal: 0, unexpected: 0 } },
      foreign: { count: 2, samples: ['a-01', 'b-1e0'] },
    },
    {
      name: "run ids with '-': the split is at the last '-' ('x-y-1' is run x-y)",
      runs: ['x', 'x-y'],
      reads: ['x-y-1', 'x-1', 'x-y-0'],
      perRun: { x: { readTotal: 1, unexpected: 0 }, 'x-y': { readTotal: 2, unexpected: 0 } },
      foreign: { count: 0, samples: [] },
    },
  ];

  it.each(cases)('$name', ({ runs, reads, perRun, foreign }) => {
    const ledgers = runs.map((runId) => ledgerOf(runId, [['awc', 0, 3]]));
    const router = new LedgerRouter(ledgers);
    const outcomes = reads.map((id) => router.recordRead(id, { queue: 'q' }));
    for (const l of ledgers) expect({ run: l.runId, readTotal: l.readTotal, unexpected: l.unexpected }).toEqual({ run: l.runId, ...perRun[l.runId] });
    expect(router.foreign).toEqual(foreign);
    // Every read is counted exactly once: in a ledger (its own or unexpected) or as foreign.
    const counted = ledgers.reduce((sum, l) => sum + l.readTotal + l.unexpected, 0) + router.foreign.count;
    expect(counted).toBe(reads.length);
    expect(outcomes.filter((o) => o === 'ours')).toHaveLength(ledgers.reduce((sum, l) => sum + l.readTotal, 0));
  });

  it(`keeps the first ${UNEXPECTED_SAMPLE_LIMIT} foreign ids, and counts them all`, () => {
    const router = new LedgerRouter([ledgerOf('a', []), ledgerOf('b', [])]);
    for (let i = 0; i < 50; i++) router.recordRead(`z-${i}`);
    expect(router.foreign.count).toBe(50);
    expect(router.foreign.samples).toEqual(Array.from({ length: UNEXPECTED_SAMPLE_LIMIT }, (_, i) => `z-${i}`));
  });

  it('refuses no ledger, and two of one run', () => {
    expect(() => new LedgerRouter([])).toThrow(RangeError);
    expect(() => new LedgerRouter([ledgerOf('a', []), ledgerOf('a', [])])).toThrow('two ledgers of run a');
  });
});

describe('duplicateRunIds', () => {
  it.each([
    { entries: [], expected: [] },
    {
      entries: [
        { file: 'a.json', runId: 'r1' },
        { file: 'b.json', runId: 'r2' },
      ],
      expected: [],
    },
    {
      entries: [
        { file: 'a.json', runId: 'r1' },
        { file: 'b.json', runId: 'r2' },
        { file: 'dir/a.json', runId: 'r1' },
      ],
      expected: [{ runId: 'r1', files: ['a.json', 'dir/a.json'] }],
    },
  ])('$entries.length entries', ({ entries, expected }) => {
    expect(duplicateRunIds(entries)).toEqual(expected);
  });
});

/** A row as verify makes it: the ledger reconciled after the router gave it its reads. */
function rowsOf(spec: { file: string; runId: string; groups: Group[] }[], reads: (ledgers: Ledger[]) => (string | undefined)[]) {
  const ledgers = spec.map((s) => ledgerOf(s.runId, s.groups));
  const router = new LedgerRouter(ledgers);
  for (const id of reads(ledgers)) router.recordRead(id, { queue: 'q' });
  const rows: LedgerRow[] = ledgers.map((l, i) => ({ file: spec[i]!.file, runId: l.runId, queue: 'q', reconciliation: reconcile(l) }));
  return { rows, foreign: router.foreign };
}

/** Each id of the ledger read `times` times, for the sequences `seqs`. */
const readsOf = (l: Ledger, seqs: number[], times = 1): string[] => seqs.flatMap((s) => Array.from({ length: times }, () => `${l.runId}-${s}`));
const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

describe('totalOf: the ledgers together', () => {
  const cases = [
    {
      name: 'three ledgers, every message read: ok',
      spec: [
        { file: 'p1.json', runId: 'r1', groups: [['awc', 0, 4]] as Group[] },
        { file: 'p2.json', runId: 'r2', groups: [['awc', 0, 5]] as Group[] },
        { file: 'p3.json', runId: 'r3', groups: [['awc', 0, 6]] as Group[] },
      ],
      reads: (ls: Ledger[]) => ls.flatMap((l) => readsOf(l, range(l.attempted))),
      expected: { attempted: 15, readDistinct: 15, readTotal: 15, unexpected: 0, lost: 0, ok: true, reasons: [] as string[] },
    },
    {
      name: "one ledger loses 2 confirmed: the total fails, the reason named by that ledger's file",
      spec: [
        { file: 'p1.json', runId: 'r1', groups: [['awc', 0, 4]] as Group[] },
        { file: 'p2.json', runId: 'r2', groups: [['awc', 0, 4]] as Group[] },
      ],
      reads: (ls: Ledger[]) => [...readsOf(ls[0]!, range(4)), ...readsOf(ls[1]!, [0, 1])],
      expected: {
        attempted: 8,
        readDistinct: 6,
        readTotal: 6,
        unexpected: 0,
        lost: 2,
        ok: false,
        reasons: ['p2.json: 2 confirmed messages were never read (lost)'],
      },
    },
    {
      name: 'foreign reads: in the total unexpected and its verdict, in no ledger',
      spec: [
        { file: 'p1.json', runId: 'r1', groups: [['awc', 0, 2]] as Group[] },
        { file: 'p2.json', runId: 'r2', groups: [['awc', 0, 2]] as Group[] },
      ],
      reads: (ls: Ledger[]) => [...ls.flatMap((l) => readsOf(l, range(2))), 'other-0', 'other-1'],
      expected: {
        attempted: 4,
        readDistinct: 4,
        readTotal: 4,
        unexpected: 2,
        lost: 0,
        ok: false,
        reasons: ['2 messages read whose id is of none of the 2 ledgers (unexpected)'],
      },
    },
    {
      name: "duplicates, silently lost, recovered and a ledger's own unexpected: summed",
      spec: [
        {
          file: 'a.json',
          runId: 'ra',
          groups: [
            ['awi', 0, 2],
            ['aw', 0, 3],
          ] as Group[],
        },
        {
          file: 'b.json',
          runId: 'rb',
          groups: [
            ['awc', 0, 3],
            ['an', 0, 1],
          ] as Group[],
        },
      ],
      reads: (ls: Ledger[]) => [...readsOf(ls[0]!, [0, 1, 2], 2), ...readsOf(ls[1]!, range(3)), 'rb-40'],
      expected: {
        attempted: 9,
        readDistinct: 6,
        readTotal: 9,
        unexpected: 1,
        lost: 0,
        ok: false,
        reasons: ['b.json: 1 message read that was never published (unexpected)'],
      },
    },
  ];

  it.each(cases)('$name', ({ spec, reads, expected }) => {
    const { rows, foreign } = rowsOf(spec, reads);
    const total = totalOf(rows, foreign);
    expect({
      attempted: total.counts.attempted,
      readDistinct: total.counts.readDistinct,
      readTotal: total.counts.readTotal,
      unexpected: total.counts.unexpected,
      lost: total.lost,
      ok: total.verdict.ok,
      reasons: total.verdict.reasons,
    }).toEqual(expected);
    expect(total.ledgers).toBe(rows.length);
    // Every count and bucket is the sum of the ledgers'; unexpected also holds the foreign reads.
    const sum = (f: (r: LedgerRow['reconciliation']) => number): number => rows.reduce((s, row) => s + f(row.reconciliation), 0);
    for (const k of Object.keys(total.counts) as (keyof typeof total.counts)[]) {
      expect(total.counts[k], k).toBe(sum((r) => r.counts[k]) + (k === 'unexpected' ? foreign.count : 0));
    }
    for (const k of ['lost', 'silentlyLost', 'knownFailed', 'indeterminateUnread', 'neverWritten', 'recovered', 'duplicated', 'duplicateDeliveries'] as const) {
      expect(total[k], k).toBe(sum((r) => r[k]));
    }
    expect(total.verdict.ok).toBe(rows.every((r) => r.reconciliation.verdict.ok) && foreign.count === 0);
  });
});

describe('queueToDrain', () => {
  const two = [
    { file: 'a.json', queue: 'q1' },
    { file: 'b.json', queue: 'q1' },
  ];
  it.each([
    { name: 'the one queue they name', reports: two, given: undefined, expected: 'q1' },
    { name: '--queue over theirs', reports: [...two, { file: 'c.json', queue: 'q2' }], given: 'q3', expected: 'q3' },
  ])('$name', ({ reports, given, expected }) => {
    expect(queueToDrain(reports, given)).toBe(expected);
  });

  it('different queues without --queue: a usage error naming each queue and its files, in one line', () => {
    const run = () => queueToDrain([...two, { file: 'c.json', queue: 'q2' }], undefined);
    expect(run).toThrow(UsageError);
    expect(run).toThrow('the ledgers name 2 queues, q1 (a.json, b.json); q2 (c.json): say which to drain with --queue');
  });
});

describe('ledgerFiles and readLedger', () => {
  it("a folder: its *.json files by name, not its other files nor its folders' files", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rmq-bench-verify-'));
    for (const f of ['p2.json', 'p10.json', 'p1.json', 'notes.txt']) await writeFile(path.join(dir, f), '{}');
    await mkdir(path.join(dir, 'sub.json'));
    await writeFile(path.join(dir, 'sub.json', 'p9.json'), '{}');
    const other = path.join(dir, 'p1.json');
    expect(await ledgerFiles([other, dir])).toEqual([other, ...['p1.json', 'p10.json', 'p2.json'].map((f) => path.join(dir, f))]);
  });

  it('a path that does not exist, or a folder without a *.json file: not found (66), naming it', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rmq-bench-verify-'));
    await expect(ledgerFiles([dir])).rejects.toThrow(new NotFoundError(`no ledger in the folder ${dir} (no *.json file in it)`));
    await expect(ledgerFiles([path.join(dir, 'nope.json')])).rejects.toThrow(`cannot read the ledger ${path.join(dir, 'nope.json')}: no such file or folder`);
  });

  it('a *.json file that is not a ledger: a data error (65) naming it', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rmq-bench-verify-'));
    const file = path.join(dir, 'settings.json');
    await writeFile(file, '{"kind": "bench"}');
    await expect(readLedger(file)).rejects.toThrow(DataError);
    await expect(readLedger(file)).rejects.toThrow(`${file} is not a producer report (kind 'bench')`);
  });
});

describe('verify --ledger: repeatable', () => {
  it('collects each --ledger in order', async () => {
    const i = await invocationOf(['verify', '--ledger', 'a.json', '--ledger', 'ledgers/', '--ledger', 'b.json']);
    expect(i.command).toBe('verify');
    expect((i.options as { ledgers: string[] }).ledgers).toEqual(['a.json', 'ledgers/', 'b.json']);
  });
});

describe('the several-ledger report', () => {
  const spec = [
    { file: 'p1.json', runId: 'r1', groups: [['awc', 0, 3]] as Group[] },
    { file: 'p2.json', runId: 'r2', groups: [['awc', 0, 3]] as Group[] },
  ];
  const { rows, foreign } = rowsOf(spec, (ls) => [...readsOf(ls[0]!, range(3)), ...readsOf(ls[1]!, [0, 1]), 'x-0']);
  const total = totalOf(rows, foreign);
  const result = {
    queue: 'q',
    drain: { queue: 'q', deliveries: 6, durationMs: 10, complete: true, leftInQueue: 0 },
    ok: total.verdict.ok,
    ledgers: rows,
    total,
  };

  it('text: a row per ledger and a total row, the foreign reads, the verdict', () => {
    const lines = unwrapped(verify.text(result)).split('\n');
    expect(lines[0]).toMatch(/^ledger\s+run id\s+attempted\s+confirmed\s+read\s+lost\s+silently lost\s+other unread\s+duplicated\s+unexpected\s+verdict$/);
    expect(lines[2]).toMatch(/^p1\.json\s+r1\s+3\s+3\s+3\s+0\s+0\s+0\s+0\s+0\s+OK$/);
    expect(lines[3]).toMatch(/^p2\.json\s+r2\s+3\s+3\s+2\s+1\s+0\s+0\s+0\s+0\s+FAILED$/);
    expect(lines[4]).toMatch(/^total\s+2 ledgers\s+6\s+6\s+5\s+1\s+0\s+0\s+0\s+1\s+FAILED$/);
    expect(lines.filter((l) => l.startsWith('other unread:'))).toEqual([]);
    expect(lines).toContain('p2.json: lost sequences (first 1): 2');
    expect(lines).toContain('read, of none of the ledgers: 1 (first 1: x-0)');
    expect(lines.at(-1)).toBe(
      'verdict: FAILED: p2.json: 1 confirmed message was never read (lost); 1 message read whose id is of none of the 2 ledgers (unexpected)',
    );
  });

  it('ledgers in one folder: the folder said once above the table, each row named by its file', () => {
    const inFolder = rows.map((r) => ({ ...r, file: `/tmp/rmq-bench-it-many-a1b2c3/${r.file}` }));
    const lines = unwrapped(verify.text({ ...result, ledgers: inFolder })).split('\n');
    expect(lines[0]).toBe('ledgers in /tmp/rmq-bench-it-many-a1b2c3/');
    expect(lines[3]).toMatch(/^p1\.json\s+r1\s+3\s+3\s+3\s+0\s+0\s+0\s+0\s+0\s+OK$/);
    expect(lines).toContain('p2.json: lost sequences (first 1): 2');
  });

  it.each([
    { files: ['/a/p1.json', '/a/p2.json'], folder: '/a', names: ['p1.json', 'p2.json'] },
    { files: ['/a/p1.json', '/b/p2.json'], folder: null, names: ['/a/p1.json', '/b/p2.json'] },
    { files: ['p1.json', 'p2.json'], folder: null, names: ['p1.json', 'p2.json'] },
    { files: ['/a/p1.json'], folder: null, names: ['/a/p1.json'] },
  ])('ledgerNames($files): folder $folder', ({ files, folder, names }) => {
    expect(ledgerNames(files)).toEqual({ folder, names });
  });

  it('"other unread" is said under the table when a row has some', () => {
    const some = rowsOf([...spec, { file: 'p3.json', runId: 'r3', groups: [['awn', 0, 1]] }], (ls) =>
      ls.flatMap((l) => readsOf(l, range(l.attempted))).slice(0, -1),
    );
    const t = totalOf(some.rows, some.foreign);
    const lines = verify.text({ ...result, ok: t.verdict.ok, ledgers: some.rows, total: t }).split('\n');
    expect(lines[4]).toMatch(/^p3\.json\s+r3\s+1\s+0\s+0\s+0\s+0\s+1\s+0\s+0\s+OK$/);
    expect(lines[6]).toBe('other unread: known failed (nacked or returned), indeterminate or never written: the producer knew of each');
  });

  it('the page: the same table (a row per ledger, a total row), and the order of each', () => {
    const html = verify.charts(result).join('\n');
    const table = /<h2>Ledgers<\/h2><table class="counts">.*?<\/table>/s.exec(html.replace(/\n/g, ''))?.[0] ?? '';
    expect(table.match(/<tr><td>/g)).toHaveLength(3);
    expect(table).toContain('<td>total</td><td>2 ledgers</td>');
    expect(html).toContain('<h2>Order</h2>');
  });

  it('its document matches the shape `rmq-bench report` reads; the figures and reasons are the total’s', () => {
    const doc = JSON.parse(toJsonDocument('verify', result, null)) as Record<string, unknown>;
    expect(shapeMismatches('verify', doc)).toEqual([]);
    expect(verify.figures(result)).toBe('2 ledgers: lost 1, silently lost 0, duplicated 0');
    expect(verify.reasons(result)).toEqual(total.verdict.reasons);
    expect(verify.verdict?.(result)).toBe(false);
  });

  it('one ledger: the text is its reconciliation, as it was; the page adds no table', () => {
    const one = rowsOf([spec[0]!], (ls) => readsOf(ls[0]!, range(3)));
    const t = totalOf(one.rows, one.foreign);
    const single = { ...result, ok: true, reconciliation: one.rows[0]!.reconciliation, ledgers: one.rows, total: t };
    expect(verify.text(single)).toContain('read (distinct)');
    expect(verify.text(single).split('\n').at(-1)).toBe('verdict: OK');
    expect(verify.charts(single)).toEqual([]);
    expect(verify.figures(single)).toBe('lost 0, silently lost 0, duplicated 0');
    expect(shapeMismatches('verify', JSON.parse(toJsonDocument('verify', single, null)) as Record<string, unknown>)).toEqual([]);
  });
});
