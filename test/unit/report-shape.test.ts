import { describe, expect, it } from 'vitest';
import {
  classifyInput,
  DOCUMENT_READERS,
  type DocumentReaders,
  renderCombinedReport,
  reportEntries,
  reportOk,
  reportSummary,
} from '../../src/report/combined.js';
import { keyFigures } from '../../src/report/doc-figures.js';
import { mismatchesText, mismatchText, shapeMismatches } from '../../src/report/doc-shape.js';
import { none } from '../../src/report/kind-view.js';
import { KIND_VIEWS, KINDS } from '../../src/report/kinds.js';
import { type EntryStatus, renderReportLines } from '../../src/report/kinds/report/view.js';
import type { Mismatch } from '../../src/report/shape-check.js';
import { toJsonDocument } from '../../src/report/json.js';
import { type CompareResult, totalsFor } from '../../src/scenarios/under-faults/compare.js';
import { chaosResult } from './fixtures/chaos.js';
import { COMPARE_OPTIONS, compareRun, reconciliationOf } from './fixtures/runs.js';

/**
 * doc-shape.ts: what `rmq-bench report` reads of each kind, checked before anything is computed
 * from a document. For each kind it reads fields of: a valid document passes, a broken field is
 * named with its path, what was expected and what was found.
 */

type Doc = Record<string, unknown>;
// biome-ignore lint/suspicious/noExplicitAny: a case edits one field deep in a JSON document
type Json = any;

const text = (kind: string, d: Doc): string => JSON.stringify({ schemaVersion: 1, kind, ...d });
const entryOf = (kind: string, d: Doc) => reportEntries([{ file: `${kind}.json`, text: text(kind, d) }])[0]!;

const NO_LATENCY = { p50Ms: null, p95Ms: null, p99Ms: null, maxMs: null };

/** The least each kind needs, and the status it reads as. */
const VALID: { name: string; kind: string; doc: Doc; status: EntryStatus }[] = [
  {
    name: 'compare',
    kind: 'compare',
    doc: {
      ok: true,
      totals: [{ mode: 'confirms-on', runs: 1, attempted: 5, reportedSent: 5, confirmed: 5, read: 5, lost: 0, silentlyLost: 0, duplicated: 0, recovered: 0 }],
      runs: [{ mode: 'confirms-on', run: 1, producer: {}, reconciliation: { lost: 0, silentlyLost: 0, duplicated: 0, recovered: 0 } }],
    },
    status: 'ok',
  },
  {
    name: 'consumer-crash',
    kind: 'consumer-crash',
    doc: { ok: false, reasons: ['manual: 2 processed twice'], runs: [{ mode: 'manual', run: 1, lost: 0, processedTwice: 2, duplicatesSkipped: 0 }] },
    status: 'failed',
  },
  {
    name: 'producer-crash',
    kind: 'producer-crash',
    doc: { ok: true, totals: [{ mode: 'outbox', lost: 0, duplicated: 1 }], runs: [{ mode: 'outbox', run: 1, lost: 0, duplicated: 1 }] },
    status: 'ok',
  },
  { name: 'prefetch-demo', kind: 'prefetch-demo', doc: { rows: [{ prefetch: 1, fastProcessed: 9, slowProcessed: 1 }] }, status: 'no-verdict' },
  {
    name: 'dlq-demo',
    kind: 'dlq-demo',
    doc: { ok: true, results: [{ reason: 'rejected', published: 2, expectedInDlq: 2, dead: [{}, {}] }] },
    status: 'ok',
  },
  {
    name: 'dlq-demo --strategy',
    kind: 'dlq-demo',
    doc: { ok: true, mode: 'strategy', count: 10, fault: 'pause', runs: [{ variant: 'at-most-once', run: 1, inDlq: 10, leftInSource: 0, lost: 0 }] },
    status: 'ok',
  },
  {
    name: 'retry-demo',
    kind: 'retry-demo',
    doc: { ok: true, messageId: 'm-1', ttlMs: 500, attempts: [{ attempt: 1, atMs: 10, outcome: 'processed' }] },
    status: 'ok',
  },
  {
    name: 'retry-demo --backoff (the ladder)',
    kind: 'retry-demo',
    doc: {
      ok: true,
      mode: 'ladder',
      rungs: [{ ttlMs: 100 }],
      attempts: [{ messageId: 'good-1', attempt: 1, atMs: 10, routingKey: 'demo.backoff.orders', outcome: 'processed' }],
    },
    status: 'ok',
  },
  {
    name: 'delayed-retry-demo',
    kind: 'delayed-retry-demo',
    doc: {
      ok: true,
      type: 'all',
      minMs: 200,
      maxMs: 1_000,
      messages: ['d-1'],
      rounds: [{ index: 1, kind: 'reject', expectedMs: 200, measured: [{ delayMs: 210 }] }],
      deliveries: [
        { messageId: 'd-1', atMs: 3, round: 0 },
        { messageId: 'd-1', atMs: 213, round: 1 },
      ],
    },
    status: 'ok',
  },
  {
    name: 'delivery-limit-demo',
    kind: 'delivery-limit-demo',
    doc: {
      ok: true,
      deliveryLimit: 2,
      rounds: 6,
      rows: [
        {
          action: 'close',
          dlx: true,
          deliveries: [
            { deliveryCount: null, redelivered: false },
            { deliveryCount: 1, redelivered: true },
          ],
          fate: 'dead-lettered',
          deathReason: 'delivery_limit',
          agrees: true,
        },
      ],
    },
    status: 'ok',
  },
  {
    name: 'consumer-timeout-demo',
    kind: 'consumer-timeout-demo',
    doc: {
      ok: true,
      timeoutMs: 3_000,
      runs: [
        {
          via: 'policy',
          slowId: 'm-2',
          naive: {
            queue: 'q.naive',
            deliveries: [{ atMs: 5, messageId: 'm-2', redelivered: false }],
            cancelAtMs: 3_010,
            lateAckAtMs: null,
            channelClosedAtMs: null,
          },
          handling: {
            queue: 'q.handling',
            deliveries: [{ atMs: 5, messageId: 'm-2', deliveryCount: 0, acquiredCount: 0 }],
            cancelAtMs: null,
            resubscribedAtMs: null,
          },
        },
      ],
      samples: [{ tMs: 0, ready: { 'q.naive': 1, 'q.handling': 1 } }],
    },
    status: 'ok',
  },
  {
    name: 'alarm-demo',
    kind: 'alarm-demo',
    doc: {
      ok: true,
      alarm: 'memory',
      node: 'rabbit1',
      timeline: { raiseAtMs: 1_000, clearAtMs: 5_000 },
      publishers: [{ role: 'waits', node: 'rabbit2', sent: 10, arrived: 10, missing: 0, blockedAtMs: 1_200, unblockedAtMs: 5_100, gaveUpAtMs: null }],
      samples: [{ tMs: 0, sent: { waits: 0 }, delivered: 0 }],
    },
    status: 'ok',
  },
  {
    name: 'durability-demo',
    kind: 'durability-demo',
    doc: { ok: true, how: 'stop', rows: [{ queueType: 'quorum', deliveryMode: 'persistent', confirmed: 10, survived: 10, expected: 10 }] },
    status: 'ok',
  },
  {
    name: 'bench',
    kind: 'bench',
    doc: { runs: [{ label: 'none', publishRatePerSec: 1_000, consumeRatePerSec: null, confirmLatency: { ...NO_LATENCY }, e2eLatency: { ...NO_LATENCY } }] },
    status: 'no-verdict',
  },
  {
    name: 'chaos',
    kind: 'chaos',
    doc: {
      ok: true,
      options: { queuePrefix: 'rmq-bench.chaos' },
      durationMs: 1_000,
      totals: {
        attempted: 1,
        written: 1,
        confirmed: 1,
        read: 1,
        lost: 0,
        silentlyLost: 0,
        indeterminateUnread: 0,
        recovered: 0,
        duplicated: 0,
        duplicateDeliveries: 0,
      },
      faults: [],
      availability: [],
      samples: [],
    },
    status: 'ok',
  },
  // The kinds whose key figures only read them: every field may be missing (the figures say "?").
  { name: 'audit', kind: 'audit', doc: { ok: true }, status: 'ok' },
  { name: 'producer', kind: 'producer', doc: { written: 1 }, status: 'no-verdict' },
  { name: 'consumer', kind: 'consumer', doc: {}, status: 'no-verdict' },
  // verify prints no ok of its own: its reconciliation's verdict is the one.
  { name: 'verify', kind: 'verify', doc: { reconciliation: { verdict: { ok: true } } }, status: 'ok' },
  { name: 'failover', kind: 'failover', doc: { newLeader: null }, status: 'no-verdict' },
  { name: 'dlq-inspect', kind: 'dlq-inspect', doc: { queue: 'demo.dlq' }, status: 'no-verdict' },
  { name: 'dlq-replay', kind: 'dlq-replay', doc: {}, status: 'no-verdict' },
  { name: 'report', kind: 'report', doc: { ok: true, documents: [] }, status: 'ok' },
];

const validDoc = (name: string): Doc => structuredClone(VALID.find((v) => v.name === name)!.doc);

/** A valid document of `name` with one change. */
function broken(name: string, change: (d: Json) => void): Doc {
  const d = validDoc(name);
  change(d);
  return d;
}

/** A field broken per kind (at least one each): the problem the entry then says. */
const BROKEN: { kind: string; doc: Doc; problem: string }[] = [
  {
    kind: 'compare',
    doc: broken('compare', (d) => {
      d.runs = 'not a list';
    }),
    problem: 'runs is a string, expected an array of runs',
  },
  {
    kind: 'compare',
    doc: broken('compare', (d) => {
      delete d.runs[0].reconciliation.lost;
    }),
    problem: 'runs[0].reconciliation.lost is missing, expected a number',
  },
  {
    kind: 'compare',
    doc: broken('compare', (d) => {
      d.runs[0].fault = { kind: 'kill', node: 'rabbit1', faultAtMs: 10, electedAtMs: '12', restoredAtMs: null, rejoinedAtMs: null };
    }),
    problem: 'runs[0].fault.electedAtMs is a string, expected a number or null',
  },
  {
    kind: 'compare',
    doc: broken('compare', (d) => {
      d.interrupted = 'no';
    }),
    problem: 'interrupted is a string, expected a boolean',
  },
  {
    kind: 'consumer-crash',
    doc: broken('consumer-crash', (d) => {
      d.runs[0].lost = '5';
    }),
    problem: 'runs[0].lost is a string, expected a number',
  },
  {
    kind: 'producer-crash',
    doc: broken('producer-crash', (d) => {
      delete d.totals;
    }),
    problem: 'totals is missing, expected an array of mode totals',
  },
  {
    kind: 'prefetch-demo',
    doc: broken('prefetch-demo', (d) => {
      d.rows.push(null);
    }),
    problem: 'rows[1] is null, expected an object',
  },
  {
    kind: 'dlq-demo',
    doc: broken('dlq-demo', (d) => {
      d.results[0].dead = 2;
    }),
    problem: 'results[0].dead is a number, expected an array of dead letters',
  },
  {
    kind: 'dlq-demo',
    doc: broken('dlq-demo', (d) => {
      d.mode = 'strategic';
    }),
    problem: 'mode is "strategic", expected "strategy", or no mode',
  },
  {
    kind: 'dlq-demo',
    doc: broken('dlq-demo --strategy', (d) => {
      delete d.runs[0].inDlq;
    }),
    problem: 'runs[0].inDlq is missing, expected a number',
  },
  {
    kind: 'retry-demo',
    doc: broken('retry-demo', (d) => {
      d.attempts[0].atMs = null;
    }),
    problem: 'attempts[0].atMs is null, expected a number',
  },
  {
    kind: 'retry-demo',
    doc: broken('retry-demo --backoff (the ladder)', (d) => {
      d.rungs = {};
    }),
    problem: 'rungs is an object, expected an array of rungs',
  },
  {
    kind: 'delayed-retry-demo',
    doc: broken('delayed-retry-demo', (d) => {
      d.rounds[0].measured[0].delayMs = '210';
    }),
    problem: 'rounds[0].measured[0].delayMs is a string, expected a number',
  },
  {
    kind: 'delivery-limit-demo',
    doc: broken('delivery-limit-demo', (d) => {
      d.rows[0].deliveries[1].deliveryCount = '1';
    }),
    problem: 'rows[0].deliveries[1].deliveryCount is a string, expected a number or null',
  },
  {
    kind: 'consumer-timeout-demo',
    doc: broken('consumer-timeout-demo', (d) => {
      delete d.runs[0].naive.cancelAtMs;
    }),
    problem: 'runs[0].naive.cancelAtMs is missing, expected a number or null',
  },
  {
    kind: 'consumer-timeout-demo',
    doc: broken('consumer-timeout-demo', (d) => {
      d.samples[0].ready['q.naive'] = 'one';
    }),
    problem: 'samples[0].ready["q.naive"] is a string, expected a number',
  },
  {
    kind: 'alarm-demo',
    doc: broken('alarm-demo', (d) => {
      delete d.publishers[0].blockedAtMs;
    }),
    problem: 'publishers[0].blockedAtMs is missing, expected a number or null',
  },
  {
    kind: 'alarm-demo',
    doc: broken('alarm-demo', (d) => {
      d.checks = [{ claim: 'blocked', held: 'yes' }];
    }),
    problem: 'checks[0].held is a string, expected a boolean',
  },
  {
    kind: 'durability-demo',
    doc: broken('durability-demo', (d) => {
      d.how = 3;
    }),
    problem: 'how is a number, expected a string',
  },
  {
    kind: 'bench',
    doc: broken('bench', (d) => {
      d.runs[0].confirmLatency.p50Ms = '1';
    }),
    problem: 'runs[0].confirmLatency.p50Ms is a string, expected a number or null',
  },
  {
    kind: 'chaos',
    doc: broken('chaos', (d) => {
      d.faults = [
        {
          index: 1,
          kind: 'kill',
          target: 'leader',
          nodes: ['rabbit1'],
          reason: '',
          issuedAtMs: 1,
          appliedAtMs: 2,
          restoredAtMs: 3,
          wholeAtMs: 4,
          leadersBefore: { 'q.1': 3 },
          leadersAfter: {},
          error: null,
        },
      ];
    }),
    problem: 'faults[0].leadersBefore["q.1"] is a number, expected a string or null',
  },
  {
    kind: 'audit',
    doc: broken('audit', (d) => {
      d.counts = 'x';
    }),
    problem: 'counts is a string, expected an object',
  },
  {
    kind: 'producer',
    doc: broken('producer', (d) => {
      d.written = '100';
    }),
    problem: 'written is a string, expected a number',
  },
  {
    kind: 'consumer',
    doc: broken('consumer', (d) => {
      d.received = null;
    }),
    problem: 'received is null, expected a number',
  },
  {
    kind: 'verify',
    doc: broken('verify', (d) => {
      delete d.reconciliation.verdict;
    }),
    problem: 'reconciliation.verdict is missing, expected an object',
  },
  {
    kind: 'failover',
    doc: broken('failover', (d) => {
      d.electionMs = 'fast';
    }),
    problem: 'electionMs is a string, expected a number or null',
  },
  {
    kind: 'dlq-inspect',
    doc: broken('dlq-inspect', (d) => {
      d.total = [];
    }),
    problem: 'total is an array, expected a number',
  },
  {
    kind: 'dlq-replay',
    doc: broken('dlq-replay', (d) => {
      d.replayed = {};
    }),
    problem: 'replayed is an object, expected a number',
  },
  {
    kind: 'report',
    doc: broken('report', (d) => {
      d.documents = [1];
    }),
    problem: 'documents[0] is a number, expected an object',
  },
];

const SHAPED: string[] = KINDS.filter((k) => KIND_VIEWS[k].shape !== null);
const UNSHAPED = KINDS.filter((k) => KIND_VIEWS[k].shape === null);

describe('the kinds: each one the report reads fields of', () => {
  it('has a valid and a broken case here', () => {
    expect([...new Set(VALID.map((v) => v.kind))].sort()).toEqual([...SHAPED].sort());
    expect([...new Set(BROKEN.map((b) => b.kind))].sort()).toEqual([...SHAPED].sort());
  });

  // A kind without a shape must be one the report reads nothing of: no chart, the fallback figures.
  it.each(UNSHAPED)('%s: the report draws nothing and reads no figure of its own from it', (kind) => {
    expect(KIND_VIEWS[kind].charts).toBe(none);
    expect(keyFigures(kind, { n: 1, name: 'x' })).toBe('n 1');
    expect(entryOf(kind, { anything: ['at', 'all'] }).status).toBe('no-verdict');
  });
});

describe('a valid document of each kind the report reads fields of', () => {
  it.each(VALID)('$name: no mismatch; read as $status', ({ kind, doc, status }) => {
    expect(shapeMismatches(kind, doc)).toEqual([]);
    const e = entryOf(kind, doc);
    expect(e.problem).toBeNull();
    expect(e.status).toBe(status);
  });

  const runs = [
    compareRun('confirms-on', 1, reconciliationOf('on-1', [['awc', 1, 5]])),
    compareRun('confirms-off', 1, reconciliationOf('off-1', [['aw', 1, 4]])),
  ];
  const compare: CompareResult = {
    options: COMPARE_OPTIONS,
    runs,
    partitionHandling: null,
    interrupted: false,
    partial: null,
    totals: [totalsFor('confirms-on', runs), totalsFor('confirms-off', runs)],
    ok: true,
  };
  it.each([
    ['compare', compare],
    ['chaos', chaosResult()],
  ] as const)('%s as the command prints it: read, its charts drawn', (kind, data) => {
    const e = classifyInput({ file: 'x.json', text: toJsonDocument(kind, data, null) });
    expect(e.problem).toBeNull();
    expect(e.status).toBe('ok');
    expect(e.charts.length).toBeGreaterThan(0);
  });
});

describe('a broken field: malformed, with its path, what was expected and what was found', () => {
  it.each(BROKEN)('$kind: $problem', ({ kind, doc, problem }) => {
    const e = entryOf(kind, doc);
    expect(e).toMatchObject({ status: 'malformed', kind, knownKind: true, schemaVersion: 1, problem, keyFigures: '-', reasons: [], charts: [], excerpt: null });
    expect(e.doc).toEqual({ schemaVersion: 1, kind, ...doc });
    expect(reportOk([e])).toBe(false);
    expect(renderReportLines([e], 'i.html').split('\n')[0]).toBe(`${kind}.json (${kind}): malformed: ${problem}`);
    expect(reportSummary([e], 'i.html')).toMatchObject({ ok: false, documents: [{ status: 'malformed', kind, problem }] });
    const page = renderCombinedReport([e], 'i.html');
    expect(page).toContain(`<span class="verdict failed">not all OK</span>`);
    expect(page).toContain(`<span class="bad-input">malformed: ${problem.replace(/"/g, '&quot;')}</span>`);
  });
});

describe('ok: a boolean, or none', () => {
  const known = [...VALID.map((v) => ({ kind: v.kind, doc: v.doc })), ...UNSHAPED.map((kind) => ({ kind, doc: {} }))];
  it.each(known)('$kind: "ok": "yes" is malformed', ({ kind, doc }) => {
    const e = entryOf(kind, { ...doc, ok: 'yes' });
    expect(e.status).toBe('malformed');
    expect(e.problem).toBe('ok is a string, expected a boolean');
  });

  it('a kind rmq-bench does not know: only its ok is read', () => {
    expect(entryOf('frobnicate', { ok: 1 })).toMatchObject({ status: 'malformed', knownKind: false, problem: 'ok is a number, expected a boolean' });
    expect(entryOf('frobnicate', { ok: true, problems: 3, runs: 'x' }).status).toBe('ok');
  });

  it("a known kind's problems and reasons: lists of strings", () => {
    expect(entryOf('cluster-up', { problems: 'disk' }).problem).toBe('problems is a string, expected an array of strings');
    expect(entryOf('audit', { ok: false, reasons: ['a', 2] }).problem).toBe('reasons[1] is a number, expected a string');
  });

  it('a number JSON cannot hold exactly (1e400) is out of range', () => {
    const e = classifyInput({ file: 'p.json', text: '{"schemaVersion": 1, "kind": "producer", "written": 1e400}' });
    expect(e.problem).toBe('written is a number out of range, expected a number');
  });
});

describe('mismatchesText: the first mismatches, as many as fit on a line, then how many more', () => {
  const m = (path: string): Mismatch => ({ path, expected: 'a number', found: 'missing' });

  it('one', () => {
    expect(mismatchesText([m('runs[0].lost')])).toBe('runs[0].lost is missing, expected a number');
  });

  it('many: as many as fit in about 150 characters, then the count of the rest', () => {
    const all = Array.from({ length: 10 }, (_, i) => m(`runs[${i}].lost`));
    expect(mismatchesText(all)).toBe(
      'runs[0].lost is missing, expected a number; runs[1].lost is missing, expected a number; runs[2].lost is missing, expected a number; and 7 more',
    );
  });

  it('the first is shown even when it is long; the page and the lines keep it to one line of 160 characters', () => {
    const long = m(`runs[0].${'x'.repeat(300)}`);
    expect(mismatchesText([long, m('a')])).toBe(`${mismatchText(long)}; and 1 more`);
    const e = entryOf('compare', { ...validDoc('compare'), runs: Array.from({ length: 50 }, () => ({})) });
    expect(e.problem).toMatch(/^runs\[0\]\.mode is missing, expected a string; .*; and \d+ more$/);
    expect(e.problem!.length).toBeLessThanOrEqual(160);
  });
});

describe('the safety net: what throws after the fields matched makes the document malformed, with the step', () => {
  const failed = { file: 'c.json', text: text('consumer-crash', validDoc('consumer-crash')) };
  const boom = (): never => {
    throw new TypeError("Cannot read properties of undefined (reading 'map')");
  };
  const cases: { step: keyof DocumentReaders; problem: string }[] = [
    { step: 'verdict', problem: 'its verdict could not be read from it' },
    { step: 'figures', problem: 'its key figures could not be computed from it' },
    { step: 'reasons', problem: 'why it failed could not be read from it' },
    { step: 'charts', problem: 'its charts could not be drawn from it' },
  ];
  it.each(cases)('$step: "$problem (TypeError: …)"', ({ step, problem }) => {
    const e = classifyInput(failed, { ...DOCUMENT_READERS, [step]: boom });
    expect(e).toMatchObject({
      status: 'malformed',
      kind: 'consumer-crash',
      knownKind: true,
      problem: `${problem} (TypeError: Cannot read properties of undefined (reading 'map'))`,
      keyFigures: '-',
      reasons: [],
      charts: [],
    });
    expect(e.doc).not.toBeNull();
    expect(reportOk([{ ...e, anchor: 'doc-c' }])).toBe(false);
  });

  it('the readers as given: the same entry as without them', () => {
    expect(classifyInput(failed, DOCUMENT_READERS)).toEqual(classifyInput(failed));
    expect(classifyInput(failed).status).toBe('failed');
  });
});
