import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { report } from '../../src/cli/commands/report.js';
import type { Context } from '../../src/context.js';
import { DataError, ExitCode, NotFoundError, UsageError } from '../../src/errors.js';
import { anchorsFor, classifyInput, renderCombinedReport, reportEntries, reportOk, reportSummary, type ReportEntry } from '../../src/report/combined.js';
import { countsLine, renderReportLines } from '../../src/report/kinds/report/view.js';
import { errorDocument } from '../../src/cli/error-document.js';
import { failureReasons, keyFigures } from '../../src/report/doc-figures.js';
import { toJsonDocument } from '../../src/report/json.js';
import { type CompareResult, totalsFor } from '../../src/scenarios/under-faults/compare.js';
import { collectReportInputs, listReportFiles, type ReportInput } from '../../src/scenarios/broker-tools/report.js';
import { COMPARE_OPTIONS, compareRun, reconciliationOf } from './fixtures/runs.js';
import { captureOutput } from './program-harness.js';

const doc = (o: Record<string, unknown>): string => JSON.stringify({ schemaVersion: 1, ...o });

const PREFETCH = {
  kind: 'prefetch-demo',
  options: {},
  rows: [
    { prefetch: 1, fastProcessed: 180, slowProcessed: 20, totalMs: 2_345.6, fastMaxHeld: 1, slowMaxHeld: 1 },
    { prefetch: 0, fastProcessed: 100, slowProcessed: 100, totalMs: 10_000, fastMaxHeld: 100, slowMaxHeld: 100 },
  ],
};
const DLQ_FAILED = {
  kind: 'dlq-demo',
  ok: false,
  results: [
    { reason: 'expired', published: 2, expectedInDlq: 2, dead: [{}, {}], ok: true, problems: [] },
    { reason: 'rejected', published: 2, expectedInDlq: 2, dead: [{}], ok: false, problems: ['1 of 2 in demo.dlq'] },
  ],
};

describe('classifyInput: one row of the summary per input', () => {
  const cases: { name: string; input: ReportInput; status: string; text: string; kind?: string | null; knownKind?: boolean }[] = [
    { name: 'OK', input: { file: 'a.json', text: doc({ kind: 'audit', ok: true, counts: { pass: 3, warn: 1, fail: 0 } }) }, status: 'ok', text: 'OK' },
    { name: 'FAILED', input: { file: 'b.json', text: doc(DLQ_FAILED) }, status: 'failed', text: 'FAILED' },
    { name: 'no verdict', input: { file: 'c.json', text: doc(PREFETCH) }, status: 'no-verdict', text: 'no verdict' },
    {
      name: 'verify: the reconciliation verdict',
      input: { file: 'v.json', text: doc({ kind: 'verify', reconciliation: { lost: 2, verdict: { ok: false, reasons: ['2 confirmed messages lost'] } } }) },
      status: 'failed',
      text: 'FAILED',
    },
    {
      name: 'unknown kind: its verdict still counts',
      input: { file: 'u.json', text: doc({ kind: 'frobnicate', ok: true, n: 3 }) },
      status: 'ok',
      text: 'OK',
      kind: 'frobnicate',
      knownKind: false,
    },
    {
      name: "--json's error document: failed, a kind rmq-bench prints",
      input: { file: 'x.json', text: errorDocument(68, { message: 'no broker at amqp://u:***@h:5672', hint: 'is the cluster up?' }) },
      status: 'failed',
      text: 'FAILED',
      kind: 'error',
      knownKind: true,
    },
    {
      name: 'newer schema',
      input: { file: 'n.json', text: JSON.stringify({ schemaVersion: 7, kind: 'compare', ok: true }) },
      status: 'newer',
      text: 'written by a newer rmq-bench (schemaVersion 7; this one reads 1)',
      kind: 'compare',
      knownKind: true,
    },
    {
      name: 'empty',
      input: { file: 'e.json', text: '' },
      status: 'malformed',
      text: 'malformed: empty file: no JSON document (did the command fail before printing one?)',
    },
    { name: 'not JSON', input: { file: 'x.json', text: '{"schemaVersion": 1,\n"kind": "compare", ' }, status: 'malformed', text: 'malformed: not JSON (' },
    { name: 'an array', input: { file: 'x.json', text: '[1, 2]' }, status: 'malformed', text: 'malformed: not a JSON object (an array)' },
    { name: 'a string', input: { file: 'x.json', text: '"ok"' }, status: 'malformed', text: 'malformed: not a JSON object (a string)' },
    { name: 'null', input: { file: 'x.json', text: 'null' }, status: 'malformed', text: 'malformed: not a JSON object (null)' },
    {
      name: 'no kind',
      input: { file: 'x.json', text: '{"schemaVersion": 1}' },
      status: 'malformed',
      text: 'malformed: no kind: not a document rmq-bench --json prints',
    },
    {
      name: 'neither',
      input: { file: 'x.json', text: '{"queue": "q"}' },
      status: 'malformed',
      text: 'malformed: no schemaVersion and no kind: not a document rmq-bench --json prints',
    },
    {
      name: 'schemaVersion not a number',
      input: { file: 'x.json', text: '{"schemaVersion": "1", "kind": "compare"}' },
      status: 'malformed',
      text: 'malformed: schemaVersion is not a whole number above 0 ("1")',
    },
    {
      name: 'schemaVersion 0',
      input: { file: 'x.json', text: '{"schemaVersion": 0, "kind": "compare"}' },
      status: 'malformed',
      text: 'malformed: schemaVersion is not a whole number above 0 (0)',
    },
    {
      name: 'kind not a name',
      input: { file: 'x.json', text: '{"schemaVersion": 1, "kind": 3}' },
      status: 'malformed',
      text: 'malformed: kind is not a name (3)',
    },
    { name: 'unreadable', input: { file: 'r.json', readError: 'cannot read it: EACCES' }, status: 'unreadable', text: 'unreadable: cannot read it: EACCES' },
  ];

  it.each(cases)('$name', ({ input, status, text, kind, knownKind }) => {
    const [e] = reportEntries([input]);
    expect(e!.status).toBe(status);
    const page = renderCombinedReport([e!], 'index.html', '2026-01-01T00:00:00.000Z');
    const row = page.match(new RegExp(`<tr data-status="${status}">.*?</tr>`))?.[0] ?? '';
    // The row links to the section, and says the verdict in words.
    expect(row).toContain(`<a href="#${e!.anchor}">${input.file}</a>`);
    expect(row.replace(/<[^>]+>/g, '')).toContain(text.replace(/"/g, '&quot;'));
    expect(page).toContain(`<section class="doc" id="${e!.anchor}" data-status="${status}"`);
    if (kind !== undefined) expect(e!.kind).toBe(kind);
    if (knownKind !== undefined) expect(e!.knownKind).toBe(knownKind);
    expect(renderReportLines([e!], 'index.html').split('\n')[0]).toContain(text.replace(/\($/, ''));
  });

  it('a malformed reason is one line, at most 160 characters', () => {
    const e = classifyInput({ file: 'x.json', text: `{"a": "${'x\n'.repeat(300)}` });
    expect(e.problem).not.toMatch(/\n/);
    expect(e.problem!.length).toBeLessThanOrEqual(160);
  });

  it('a failed document: why, in the row (with a link to its section) and in its section', () => {
    const [e] = reportEntries([{ file: 'dlq.json', text: doc(DLQ_FAILED) }]);
    expect(e!.reasons).toEqual(['rejected: 1 of 2 in demo.dlq']);
    const page = renderCombinedReport([e!], 'index.html');
    const row = page.match(/<tr data-status="failed">.*?<\/tr>/)?.[0] ?? '';
    expect(row).toContain('<li>rejected: 1 of 2 in demo.dlq</li>');
    expect(row).toContain('<a href="#doc-dlq">see its section</a>');
    expect(page).toContain('<ul class="reasons"><li>rejected: 1 of 2 in demo.dlq</li></ul>');
  });

  it('a failed document that gives no reason says so', () => {
    const [e] = reportEntries([{ file: 'f.json', text: doc({ kind: 'bench', ok: false, runs: [] }) }]);
    expect(e!.reasons).toEqual([]);
    expect(renderCombinedReport([e!], 'i.html')).toContain('the document gives no reason');
  });
});

describe('keyFigures: the figures each kind is about', () => {
  const cases: { kind: string; doc: Record<string, unknown>; figures: string }[] = [
    {
      kind: 'compare',
      doc: {
        totals: [
          { mode: 'confirms-on', lost: 0, silentlyLost: 0, duplicated: 3 },
          { mode: 'confirms-off', lost: 0, silentlyLost: 1234, duplicated: 0 },
        ],
      },
      figures: 'confirms-on: lost 0, silently lost 0, duplicated 3; confirms-off: lost 0, silently lost 1,234, duplicated 0',
    },
    {
      kind: 'compare',
      doc: { interrupted: true, totals: [{ mode: 'confirms-on', lost: 1, silentlyLost: 0, duplicated: 0 }] },
      figures: 'interrupted; confirms-on: lost 1, silently lost 0, duplicated 0',
    },
    {
      kind: 'consumer-crash',
      doc: {
        runs: [
          { mode: 'autoack', lost: 5, processedTwice: 0 },
          { mode: 'manual', lost: 0, processedTwice: 2 },
          { mode: 'autoack', lost: 7, processedTwice: 0 },
        ],
      },
      figures: 'autoack: lost 12, processed twice 0; manual: lost 0, processed twice 2',
    },
    { kind: 'prefetch-demo', doc: PREFETCH, figures: 'prefetch 1: 2,346 ms, fast 180 / slow 20; prefetch 0 (unlimited): 10,000 ms, fast 100 / slow 100' },
    { kind: 'dlq-demo', doc: DLQ_FAILED, figures: 'expired: 2 of 2 dead-lettered; rejected: 1 of 2 dead-lettered' },
    {
      kind: 'dlq-demo',
      doc: {
        mode: 'strategy',
        summaries: [
          { variant: 'at-most-once', lost: 40, published: 100 },
          { variant: 'at-least-once', lost: 0, published: 100 },
        ],
      },
      figures: 'at-most-once: lost 40 of 100; at-least-once: lost 0 of 100',
    },
    { kind: 'retry-demo', doc: { ttlMs: 500, attempts: [{}, {}, {}], processedTimes: 1 }, figures: '3 attempts, TTL 500 ms, processed 1×' },
    {
      kind: 'retry-demo',
      doc: { mode: 'ladder', good: { processedTimes: 1, failures: 2 }, poison: { attempts: 4, inDlq: true } },
      figures: 'good: processed 1× after 2 failures; poison: 4 attempts, in the DLQ',
    },
    {
      kind: 'retry-demo',
      doc: { mode: 'ladder', good: { processedTimes: 1, failures: 1 }, poison: { attempts: 3, inDlq: false } },
      figures: 'good: processed 1× after 1 failure; poison: 3 attempts, not in the DLQ',
    },
    {
      kind: 'delayed-retry-demo',
      doc: { type: 'failed', via: 'policy', rounds: [{ ok: true }, { ok: false }], processed: 2 },
      figures: 'failed via policy: 1/2 rounds as expected, 2 processed',
    },
    {
      kind: 'consumer-timeout-demo',
      doc: { runs: [{ via: 'policy', measuredTimeoutMs: 5_012.4, timeoutMs: 5_000, checks: [{ held: true }, { held: false }] }] },
      figures: 'policy: cancelled after 5,012 ms (timeout 5,000 ms), claims held 1/2',
    },
    {
      kind: 'alarm-demo',
      doc: {
        alarm: 'memory',
        checks: [{ held: true }, { held: true }],
        publishers: [
          { confirmedMissing: 0, missing: 10 },
          { confirmedMissing: 0, missing: 3 },
        ],
        consumer: { backlogDuringAlarm: 200 },
      },
      figures: 'memory alarm: claims held 2/2; confirmed and never delivered 0; sent and never delivered 13; backlog read during the alarm 200',
    },
    {
      kind: 'durability-demo',
      doc: {
        how: 'stop',
        rows: [
          { queueType: 'classic', deliveryMode: 'transient', survived: 0, confirmed: 1000 },
          { queueType: 'quorum', deliveryMode: 'persistent', survived: 1000, confirmed: 1000 },
        ],
      },
      figures: 'stop: classic transient 0 of 1,000 survived, quorum persistent 1,000 of 1,000 survived',
    },
    {
      kind: 'bench',
      doc: {
        runs: [
          { label: 'none', publishRatePerSec: 41_234.6 },
          { label: 'async/256', publishRatePerSec: 20_000 },
        ],
      },
      figures: 'none: 41,235 msg/s, async/256: 20,000 msg/s',
    },
    {
      kind: 'chaos',
      doc: { faults: [{}, {}, {}], totals: { lost: 0, silentlyLost: 0, duplicated: 12 }, unexpected: 0 },
      figures: '3 faults; lost 0, silently lost 0, duplicated 12, unexpected 0',
    },
    { kind: 'audit', doc: { counts: { pass: 10, warn: 2, fail: 1 } }, figures: 'pass 10, warn 2, fail 1' },
    { kind: 'producer-crash', doc: { totals: [{ mode: 'naive', lost: 3, duplicated: 1 }] }, figures: 'naive: lost 3, duplicated 1' },
    { kind: 'producer', doc: { written: 100, confirmed: 99, nacked: 0, indeterminate: 1 }, figures: 'written 100, confirmed 99, nacked 0, indeterminate 1' },
    { kind: 'consumer', doc: { received: 10, processed: 9, duplicatesSkipped: 1 }, figures: 'received 10, processed 9, duplicates skipped 1' },
    { kind: 'verify', doc: { reconciliation: { lost: 1, silentlyLost: 0, duplicated: 2 } }, figures: 'lost 1, silently lost 0, duplicated 2' },
    {
      kind: 'failover',
      doc: { fault: 'kill', oldLeader: 'rabbit1', newLeader: 'rabbit2', electionMs: 1_830 },
      figures: 'kill rabbit1: new leader rabbit2 after 1,830 ms',
    },
    { kind: 'dlq-inspect', doc: { queue: 'demo.dlq', total: 7, rows: [] }, figures: '7 messages in demo.dlq' },
    { kind: 'dlq-replay', doc: { replayed: 5, skipped: 1, leftInQueue: 0 }, figures: 'replayed 5, skipped 1, left in the queue 0' },
    { kind: 'report', doc: { documents: [{ status: 'ok' }, { status: 'malformed' }] }, figures: '2 documents, 1 failed or not read' },
    // Any other kind, or a known kind without its fields: the top-level numeric fields.
    { kind: 'cluster-up', doc: { schemaVersion: 1, elapsedMs: 12_345, nodes: ['a'], healthy: 3 }, figures: 'elapsedMs 12,345, healthy 3' },
    { kind: 'frobnicate', doc: { a: 1, b: 'x', c: 2.25 }, figures: 'a 1, c 2.3' },
    { kind: 'compare', doc: { totals: 'nope', count: 4 }, figures: 'count 4' },
    { kind: 'chaos', doc: { totals: null, faults: null } as Record<string, unknown>, figures: '0 faults; lost ?, silently lost ?, duplicated ?, unexpected ?' },
    { kind: 'watch', doc: { name: 'x' }, figures: '-' },
    { kind: 'x', doc: Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`f${i}`, i])), figures: 'f0 0, f1 1, f2 2, f3 3, f4 4, f5 5, f6 6, f7 7, …' },
  ];
  it.each(cases)('$kind: $figures', ({ kind, doc: d, figures }) => {
    expect(keyFigures(kind, d)).toBe(figures);
  });
});

describe('failureReasons: why, from what the document says', () => {
  const cases: { kind: string; doc: Record<string, unknown>; reasons: string[] }[] = [
    { kind: 'durability-demo', doc: { problems: ['classic queue, transient: 0 of 10 survived'] }, reasons: ['classic queue, transient: 0 of 10 survived'] },
    { kind: 'chaos', doc: { reasons: ['1 confirmed message lost'] }, reasons: ['1 confirmed message lost'] },
    {
      kind: 'consumer-timeout-demo',
      doc: {
        runs: [
          {
            via: 'policy',
            problems: ['slow'],
            checks: [
              { claim: 'cancelled', held: false, measured: 'never' },
              { claim: 'x', held: true },
            ],
          },
        ],
      },
      reasons: ['policy: slow', 'policy: claim not held: cancelled (measured: never)'],
    },
    { kind: 'alarm-demo', doc: { problems: [], checks: [{ claim: 'blocked', held: false }] }, reasons: ['claim not held: blocked'] },
    {
      kind: 'compare',
      doc: {
        runs: [
          { mode: 'confirms-on', run: 1, reconciliation: { verdict: { ok: false, reasons: ['2 confirmed messages lost'] } } },
          // confirms-off losing messages is the point of the demo, not a failure.
          { mode: 'confirms-off', run: 1, reconciliation: { verdict: { ok: false, reasons: ['9 lost'] } } },
        ],
      },
      reasons: ['confirms-on run 1: 2 confirmed messages lost'],
    },
    { kind: 'verify', doc: { reconciliation: { verdict: { ok: false, reasons: ['3 lost'] } } }, reasons: ['3 lost'] },
    {
      kind: 'audit',
      doc: {
        items: [
          { status: 'fail', object: 'queue q', message: 'classic' },
          { status: 'warn', object: 'queue r', message: 'meh' },
        ],
      },
      reasons: ['queue q: classic'],
    },
    {
      kind: 'failover',
      doc: {
        ok: false,
        thresholds: {
          ok: false,
          checks: [
            { name: 'election', ok: false, message: 'election 12s > --max-election 5s' },
            { name: 'lost', ok: true, message: 'lost 0 <= --max-lost 0' },
          ],
        },
      },
      reasons: ['election 12s > --max-election 5s'],
    },
    // --json's error document: a run that failed before its result.
    { kind: 'error', doc: { exitCode: 68, message: 'no broker at amqp://u:***@h:5672', hint: null }, reasons: ['exit 68: no broker at amqp://u:***@h:5672'] },
    { kind: 'bench', doc: { ok: false }, reasons: [] },
    { kind: 'x', doc: { problems: ['a', 'a', 3] }, reasons: ['a'] },
  ];
  it.each(cases)('$kind', ({ kind, doc: d, reasons }) => {
    expect(failureReasons(kind, d)).toEqual(reasons);
  });
});

describe('anchorsFor: one id per section, unique', () => {
  it.each([
    [
      ['a/compare.json', 'b/compare.json', 'compare.json'],
      ['doc-compare', 'doc-compare-2', 'doc-compare-3'],
    ],
    [['Smoke Results/DLQ demo (1).JSON'], ['doc-dlq-demo-1']],
    [
      ['...json', '.json'],
      ['doc-file', 'doc-file-2'],
    ],
    [
      ['x/retry-ladder.json', 'retry_ladder.json'],
      ['doc-retry-ladder', 'doc-retry_ladder'],
    ],
  ])('%j', (files, anchors) => {
    expect(anchorsFor(files)).toEqual(anchors);
  });
});

describe('renderCombinedReport: the page', () => {
  const inputs: ReportInput[] = [
    { file: 'smoke/prefetch-demo.json', text: doc(PREFETCH) },
    { file: 'smoke/dlq-demo.json', text: doc(DLQ_FAILED) },
    { file: 'smoke/odd.json', text: doc({ kind: 'frobnicate', ok: true, url: 'http://example.com/x' }) },
    { file: 'smoke/bad.json', text: '<img src="https://example.com/x.png"> not json' },
    { file: 'smoke/newer.json', text: JSON.stringify({ schemaVersion: 2, kind: 'prefetch-demo', rows: 'changed' }) },
    { file: 'smoke/compare.json', text: doc({ kind: 'compare', ok: true, options: { urls: ['amqp://h'] } }) },
    { file: 'smoke/x.json', text: doc({ kind: 'audit', ok: true, note: '</script><script>alert(1)</script>' }) },
  ];
  const entries = reportEntries(inputs);
  const page = renderCombinedReport(entries, 'smoke/index.html', '2026-12-02T04:00:00.000Z');

  it('every input has a section, in order, with its anchor; the summary links to each', () => {
    const ids = [...page.matchAll(/<section class="doc" id="([^"]+)"/g)].map((m) => m[1]);
    expect(ids).toEqual(['doc-prefetch-demo', 'doc-dlq-demo', 'doc-odd', 'doc-bad', 'doc-newer', 'doc-compare', 'doc-x']);
    for (const id of ids) expect(page).toContain(`<a href="#${id}">`);
    expect([...page.matchAll(/<tr data-status=/g)]).toHaveLength(inputs.length);
    expect(page).toContain('<h2 id="summary">Summary</h2>');
  });

  it('no external resource: no http(s) src or href, no url() or @import; the CSP of the --html pages', () => {
    expect(page).not.toMatch(/\b(src|href)\s*=\s*["']?\s*(https?:)?\/\//i);
    expect(page).not.toMatch(/url\(|@import/i);
    expect(page).toContain(
      `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">`,
    );
    // The malformed file's text is shown escaped, never as markup.
    expect(page).toContain('&lt;img src=&quot;https://example.com/x.png&quot;&gt; not json');
  });

  it('charts for a known kind (headings one level down), none for an unknown or newer one, and the JSON of each document', () => {
    const prefetch = page.slice(page.indexOf('id="doc-prefetch-demo"'), page.indexOf('id="doc-dlq-demo"'));
    expect(prefetch).toContain('<svg');
    expect(prefetch).toContain('<h3>Who did the work</h3>');
    expect(prefetch).not.toMatch(/<h2>Who/);
    const odd = page.slice(page.indexOf('id="doc-odd"'), page.indexOf('id="doc-bad"'));
    expect(odd).toContain("rmq-bench does not know the kind 'frobnicate': the JSON only.");
    expect(odd).not.toContain('<svg');
    const newer = page.slice(page.indexOf('id="doc-newer"'), page.indexOf('id="doc-compare"'));
    expect(newer).toContain('written by a newer rmq-bench (schemaVersion 2; this one reads 1): its fields are not interpreted');
    expect(newer).not.toContain('<svg');
    for (const e of entries.filter((x) => x.doc !== null)) {
      const m = page.match(new RegExp(`<script type="application/json" id="json-${e.anchor}">(.*?)</script>`));
      expect(JSON.parse(m![1]!)).toEqual(e.doc);
    }
  });

  it('a known kind without the fields its charts read: malformed, the fields named, its JSON kept, no chart', () => {
    const compare = page.slice(page.indexOf('id="doc-compare"'), page.indexOf('id="doc-x"'));
    const problem = 'totals is missing, expected an array of mode totals; runs is missing, expected an array of runs';
    expect(entries[5]).toMatchObject({ status: 'malformed', kind: 'compare', knownKind: true, problem, keyFigures: '-', charts: [] });
    expect(compare).toContain(
      `<p class="note">malformed: ${problem} — not read as a compare document: no figures, charts or verdict from it; the JSON only.</p>`,
    );
    expect(compare).not.toContain('<svg');
    expect(compare).toContain('<script type="application/json" id="json-doc-compare">');
  });

  it('a document cannot close its script element', () => {
    expect(page.match(/<script/g)).toHaveLength(entries.filter((e) => e.doc !== null).length + 2);
    expect(page).not.toContain('<script>alert(1)');
  });

  it('embeds the summary (the --json document) as rmq-bench-data', () => {
    const m = page.match(/<script type="application\/json" id="rmq-bench-data">(.*?)<\/script>/);
    const summary = JSON.parse(m![1]!) as { kind: string; ok: boolean; documents: { file: string; status: string }[] };
    expect(summary.kind).toBe('report');
    expect(summary.ok).toBe(false);
    expect(summary.documents.map((d) => d.status)).toEqual(['no-verdict', 'failed', 'ok', 'malformed', 'newer', 'malformed', 'ok']);
  });

  it('the "why it failed" column only when a document failed', () => {
    expect(page).toContain('<th>why it failed</th>');
    const passed = renderCombinedReport(reportEntries([inputs[0]!, inputs[3]!]), 'i.html');
    expect(passed).not.toContain('why it failed');
    expect(passed.match(/<tr data-status="no-verdict">.*?<\/tr>/)![0].match(/<td>/g)).toHaveLength(4);
  });

  it('counts and the overall verdict', () => {
    expect(countsLine(entries)).toBe('7 documents: 2 OK, 1 FAILED, 1 no verdict, 2 malformed, 1 newer schema');
    expect(page).toContain('<span class="verdict failed">not all OK</span>');
  });
});

describe('reportOk: the exit code', () => {
  const e = (status: ReportEntry['status']): ReportEntry => ({ ...reportEntries([{ file: 'a.json', text: '' }])[0]!, status });
  it.each([
    [['ok', 'no-verdict'], true],
    [['ok', 'failed'], false],
    [['ok', 'malformed'], false],
    [['unreadable'], false],
    [['newer', 'ok'], false],
  ] as const)('%j → %s', (statuses, ok) => {
    const entries = statuses.map(e);
    expect(reportOk(entries)).toBe(ok);
    expect(reportSummary(entries, 'i.html').ok).toBe(ok);
  });
});

describe('listReportFiles, collectReportInputs: the arguments → the files, read', () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'rmq-bench-report-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));
  const folder = path.join(tmp, 'results');
  mkdirSync(path.join(folder, 'sub'), { recursive: true });
  for (const name of ['b.json', 'a.json', 'C.JSON', 'notes.txt', 'sub/z.json']) writeFileSync(path.join(folder, name), doc({ kind: 'audit', ok: true }));
  mkdirSync(path.join(tmp, 'empty'));
  const out = path.join(tmp, 'index.html');

  it("a folder: its *.json files by name, not recursive; a file given twice once; a folder's files after the files before it", async () => {
    const extra = path.join(tmp, 'extra.txt');
    writeFileSync(extra, 'x');
    const r = await listReportFiles([extra, folder, path.join(folder, 'a.json')], out);
    expect(r.files).toEqual([extra, ...['C.JSON', 'a.json', 'b.json'].map((n) => path.join(folder, n))]);
    expect(r.notes).toEqual([]);
  });

  it('an empty folder: a note; nothing at all to report: not found', async () => {
    const r = await listReportFiles([path.join(tmp, 'empty'), folder], out);
    expect(r.notes).toEqual([`${path.join(tmp, 'empty')}: no *.json file in this folder`]);
    await expect(listReportFiles([path.join(tmp, 'empty')], out)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('a missing path: not found, before anything is read', async () => {
    await expect(listReportFiles([folder, path.join(tmp, 'nope.json')], out)).rejects.toThrow(`no such file or folder: ${path.join(tmp, 'nope.json')}`);
  });

  it('the output among the inputs: a usage error', async () => {
    await expect(listReportFiles([folder], path.join(folder, 'a.json'))).rejects.toBeInstanceOf(UsageError);
  });

  it('reads each file; one that cannot be read is listed, not skipped', async () => {
    const r = await collectReportInputs([path.join(folder, 'a.json'), path.join(folder, 'sub')], out);
    expect(r.inputs.map((i) => i.file)).toEqual([path.join(folder, 'a.json'), path.join(folder, 'sub/z.json')]);
    expect(r.inputs.every((i) => 'text' in i)).toBe(true);
    // A dangling link in a folder is listed (it is not a directory) and cannot be read.
    const links = path.join(tmp, 'links');
    mkdirSync(links);
    symlinkSync(path.join(tmp, 'gone.json'), path.join(links, 'gone.json'));
    const r2 = await collectReportInputs([links], out);
    expect(r2.inputs).toEqual([{ file: path.join(links, 'gone.json'), readError: 'cannot read it: ENOENT' }]);
    expect(reportEntries(r2.inputs)[0]!.status).toBe('unreadable');
  });
});

describe('a folder with a good compare document and one whose runs is "not a list"', () => {
  const output = captureOutput();
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'rmq-bench-report-shape-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));
  const folder = path.join(tmp, 'results');
  mkdirSync(folder);
  const runs = [compareRun('confirms-on', 1, reconciliationOf('on-1', [['awc', 1, 5]]))];
  const good: CompareResult = {
    options: COMPARE_OPTIONS,
    runs,
    interrupted: false,
    partial: null,
    totals: [totalsFor('confirms-on', runs)],
    partitionHandling: null,
    ok: true,
  };
  const goodFile = path.join(folder, 'compare.json');
  const brokenFile = path.join(folder, 'compare-broken.json');
  writeFileSync(goodFile, toJsonDocument('compare', good, null));
  writeFileSync(brokenFile, toJsonDocument('compare', { ...good, runs: 'not a list' }, null));
  const out = path.join(tmp, 'index.html');
  const problem = 'runs is a string, expected an array of runs';

  it('the broken one is malformed, naming the field; the overall verdict is not OK', async () => {
    const entries = reportEntries((await collectReportInputs([folder], out)).inputs);
    expect(entries.map((e) => [e.file, e.status])).toEqual([
      [brokenFile, 'malformed'],
      [goodFile, 'ok'],
    ]);
    expect(entries[0]).toMatchObject({ kind: 'compare', knownKind: true, schemaVersion: 1, problem, keyFigures: '-', reasons: [], charts: [] });
    expect(entries[0]!.doc).toMatchObject({ runs: 'not a list' });
    expect(entries[1]!.charts.length).toBeGreaterThan(0);
    expect(reportOk(entries)).toBe(false);
    expect(reportSummary(entries, out).ok).toBe(false);
    expect(renderReportLines(entries, out).split('\n')).toEqual([
      `${brokenFile} (compare): malformed: ${problem}`,
      `${goodFile} (compare): OK — confirms-on: lost 0, silently lost 0, duplicated 0`,
      `report: ${out} (2 documents: 1 OK, 1 malformed)`,
    ]);
    const page = renderCombinedReport(entries, out, '2026-12-02T04:00:00.000Z');
    const header = page.match(/<div class="meta">generated .*?<\/div>/)![0];
    expect(header).toContain('2 documents: 1 OK, 1 malformed');
    expect(header).toContain('<span class="verdict failed">not all OK</span>');
    expect(page).not.toContain('>all OK<');
    const row = page.match(/<tr data-status="malformed">.*?<\/tr>/)![0];
    expect(row).toContain(`<span class="bad-input">malformed: ${problem}</span>`);
    expect(page).not.toContain('Cannot read properties');
  });

  it('rmq-bench report ends in a data error (exit 65) after writing the page; the field is named on stderr, in the --json document and on the page', async () => {
    const logs: string[] = [];
    const running = report.run({ log: (line: string) => logs.push(line) } as unknown as Context, { json: true, inputs: [folder], html: out });
    await expect(running).rejects.toThrow(DataError);
    await expect(running).rejects.toThrow(`1 of 2 documents could not be read (${brokenFile}); the page has the rest`);
    expect(ExitCode.dataError).toBe(65);
    expect(logs).toEqual([]);
    const json = JSON.parse(output.stdout.join('')) as { kind: string; ok: boolean; documents: Record<string, unknown>[] };
    expect(json).toMatchObject({ kind: 'report', ok: false, output: out });
    expect(json.documents[0]).toEqual({
      file: brokenFile,
      anchor: 'doc-compare-broken',
      kind: 'compare',
      schemaVersion: 1,
      knownKind: true,
      status: 'malformed',
      problem,
      keyFigures: '-',
      reasons: [],
    });
    expect(json.documents[1]).toMatchObject({ status: 'ok', problem: null });
    expect(output.stderr.join('')).toContain(`${brokenFile} (compare): malformed: ${problem}\n`);
    const page = readFileSync(out, 'utf8');
    expect(page).toContain('<span class="verdict failed">not all OK</span>');
    expect(page).toContain(`malformed: ${problem}`);
  });
});
