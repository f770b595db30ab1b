import type { AuditItem } from '../audit/check.js';
import type { ConsumerResult } from '../amqp/consumer.js';
import type { PublisherResult, PublisherSample } from '../amqp/publisher.js';
import type { Reconciliation } from '../ledger/reconcile.js';
import type { LatencySummary } from '../measure/histogram.js';
import type { AlarmDemoResult, AlarmSample, AlarmTimeline, Check, ConsumerRun, PublisherRun } from '../scenarios/alarm-plan.js';
import type { AuditResult } from '../scenarios/audit.js';
import type { BenchModeResult, BenchResult } from '../scenarios/bench.js';
import type { ChaosOptions, ChaosResult, ChaosSample, ChaosTotals, FaultAvailability, FaultRecord } from '../scenarios/chaos-plan.js';
import type { CompareResult, CompareRun, FaultTimeline, ModeTotals } from '../scenarios/compare.js';
import type { ConsumerCrashResult, CrashRun } from '../scenarios/consumer-crash.js';
import type { ConsumerTimeoutDemoResult, HandlingRun, NaiveRun, QueueSample, SeenDelivery, ViaResult } from '../scenarios/consumer-timeout-plan.js';
import type { DelayedRetryDemoResult, MeasuredRedelivery, RoundResult } from '../scenarios/delayed-retry-demo.js';
import type { DlqDemoResult, ReasonResult } from '../scenarios/dlq-demo.js';
import type { ReplayResult } from '../scenarios/dlq-tools.js';
import type { DlxStrategyResult, StrategyRun, VariantSummary } from '../scenarios/dlx-strategy-plan.js';
import type { DurabilityDemoResult, DurabilityRow } from '../scenarios/durability-demo.js';
import type { FailoverResult } from '../scenarios/failover.js';
import type { PrefetchDemoResult, PrefetchRow } from '../scenarios/prefetch-demo.js';
import type { ProducerCrashResult, ProducerCrashRun, ProducerCrashTotals } from '../scenarios/producer-crash.js';
import type { RetryAttempt, RetryDemoResult } from '../scenarios/retry-demo.js';
import type { LadderAttempt, RetryLadderResult } from '../scenarios/retry-ladder.js';
import type { ReportSummary, SummaryDocument } from './combined.js';
import { type Field, type Mismatch, type Shape, anything, bool, byField, list, nullOr, num, obj, opt, record, str } from './shape-check.js';

/**
 * What `rmq-bench report` reads of each kind of --json document, and of which type: one table,
 * DOC_SHAPES, keyed by every kind rmq-bench prints, declared with shape-check.ts, which says in
 * words where a document differs ("runs[0].reconciliation.lost is missing, expected a number"). A
 * field is required when a chart cannot be drawn right without it, or it is the verdict; optional
 * (checked only when there) when the report does without it: the key figures say "?", a table
 * "-", no fault is drawn, no reason listed. Each kind's field names are checked against its result
 * type by tsc (a renamed field does not compile); their types here are the ones the report needs.
 * Pure.
 */

const strings = list('strings', str);

/** What every document of a known kind may carry: its verdict, and why it failed. */
const VERDICT = obj({ ok: opt(bool), problems: opt(strings), reasons: opt(strings) });

/** A document of any kind, known or not: its `ok` is its verdict (a boolean, or none). */
const ANY_DOCUMENT = obj({ ok: opt(bool) });

const nullNum = nullOr(num);
const nullStr = nullOr(str);
const claims = opt(list('claims', obj<Check>({ claim: opt(str), held: opt(bool), measured: opt(str) })));

const latency = obj<LatencySummary>({ p50Ms: nullNum, p95Ms: nullNum, p99Ms: nullNum, maxMs: nullNum });

const compare = obj<CompareResult>({
  totals: list(
    'mode totals',
    obj<ModeTotals>({
      mode: str,
      runs: num,
      attempted: num,
      reportedSent: num,
      confirmed: num,
      read: num,
      lost: num,
      silentlyLost: num,
      duplicated: num,
      recovered: num,
    }),
  ),
  runs: list(
    'runs',
    obj<CompareRun>({
      mode: str,
      run: num,
      producer: obj<PublisherResult>({ samples: opt(list('samples', obj<PublisherSample>({ tMs: num, written: num, confirmed: num, inFlight: num }))) }),
      fault: opt(
        nullOr(
          obj<FaultTimeline>({
            kind: str,
            node: str,
            newLeader: opt(nullStr),
            faultAtMs: num,
            electedAtMs: nullNum,
            restoredAtMs: nullNum,
            rejoinedAtMs: nullNum,
          }),
        ),
      ),
      reconciliation: obj<Reconciliation>({
        lost: num,
        silentlyLost: num,
        duplicated: num,
        recovered: num,
        verdict: opt(obj<Reconciliation['verdict']>({ ok: opt(bool), reasons: opt(strings) })),
      }),
    }),
  ),
  interrupted: opt(bool),
});

const consumerCrash = obj<ConsumerCrashResult>({
  runs: list('runs', obj<CrashRun>({ mode: str, run: num, lost: num, processedTwice: num, duplicatesSkipped: num })),
});

const producerCrash = obj<ProducerCrashResult>({
  totals: list('mode totals', obj<ProducerCrashTotals>({ mode: str, lost: num, duplicated: num })),
  runs: list('runs', obj<ProducerCrashRun>({ mode: str, run: num, lost: num, duplicated: num })),
});

const prefetchDemo = obj<PrefetchDemoResult>({
  rows: list('rows', obj<PrefetchRow>({ prefetch: num, fastProcessed: num, slowProcessed: num, totalMs: opt(num) })),
});

const dlqDemo = byField(
  'mode',
  {
    strategy: obj<DlxStrategyResult>({
      count: num,
      fault: str,
      runs: list('runs', obj<StrategyRun>({ variant: str, run: num, inDlq: num, leftInSource: num, lost: num, problems: opt(strings) })),
      summaries: opt(list('summaries', obj<VariantSummary>({ variant: opt(str), lost: opt(num), published: opt(num) }))),
    }),
  },
  obj<DlqDemoResult>({
    results: list(
      'results',
      obj<ReasonResult>({ reason: str, published: num, expectedInDlq: num, dead: list('dead letters', anything), problems: opt(strings) }),
    ),
  }),
);

const retryDemo = byField(
  'mode',
  {
    ladder: obj<RetryLadderResult>({
      rungs: list('rungs', obj<RetryLadderResult['rungs'][number]>({ ttlMs: num })),
      attempts: list('attempts', obj<LadderAttempt>({ messageId: str, attempt: num, atMs: num, routingKey: str, outcome: str })),
      good: opt(obj<RetryLadderResult['good']>({ processedTimes: opt(num), failures: opt(num) })),
      poison: opt(obj<RetryLadderResult['poison']>({ attempts: opt(num), inDlq: opt(bool) })),
    }),
  },
  obj<RetryDemoResult>({
    messageId: str,
    ttlMs: num,
    attempts: list('attempts', obj<RetryAttempt>({ attempt: num, atMs: num, outcome: str })),
    processedTimes: opt(num),
  }),
);

const delayedRetryDemo = obj<DelayedRetryDemoResult>({
  type: str,
  minMs: num,
  maxMs: num,
  via: opt(str),
  messages: list('message ids', str),
  rounds: list(
    'rounds',
    obj<RoundResult>({
      index: num,
      kind: str,
      expectedMs: num,
      measured: list('measured delays', obj<MeasuredRedelivery>({ delayMs: num })),
      ok: opt(bool),
    }),
  ),
  deliveries: list('deliveries', obj<DelayedRetryDemoResult['deliveries'][number]>({ messageId: str, atMs: num, round: num })),
  processed: opt(num),
});

const seen = (extra: { readonly [K in keyof SeenDelivery]?: Field }): Shape => list('deliveries', obj<SeenDelivery>({ atMs: num, messageId: str, ...extra }));

const consumerTimeoutDemo = obj<ConsumerTimeoutDemoResult>({
  timeoutMs: num,
  runs: list(
    'runs',
    obj<ViaResult>({
      via: str,
      slowId: str,
      naive: obj<NaiveRun>({
        queue: str,
        deliveries: seen({ redelivered: bool }),
        cancelAtMs: nullNum,
        lateAckAtMs: nullNum,
        channelClosedAtMs: nullNum,
        channelError: opt(nullStr),
      }),
      handling: obj<HandlingRun>({
        queue: str,
        deliveries: seen({ deliveryCount: num, acquiredCount: num }),
        cancelAtMs: nullNum,
        resubscribedAtMs: nullNum,
      }),
      measuredTimeoutMs: opt(nullNum),
      timeoutMs: opt(num),
      checks: claims,
      problems: opt(strings),
    }),
  ),
  samples: list('samples', obj<QueueSample>({ tMs: num, ready: record('numbers', num) })),
});

const alarmDemo = obj<AlarmDemoResult>({
  alarm: str,
  node: str,
  timeline: obj<AlarmTimeline>({ raiseAtMs: num, clearAtMs: nullNum }),
  publishers: list(
    'publishers',
    obj<PublisherRun>({
      role: str,
      node: str,
      sent: num,
      confirmed: opt(nullNum),
      indeterminate: opt(nullNum),
      arrived: num,
      missing: num,
      confirmedMissing: opt(num),
      blockedAtMs: nullNum,
      unblockedAtMs: nullNum,
      gaveUpAtMs: nullNum,
    }),
  ),
  samples: list('samples', obj<AlarmSample>({ tMs: num, sent: record('numbers', num), delivered: num })),
  consumer: opt(obj<ConsumerRun>({ backlogDuringAlarm: opt(num) })),
  checks: claims,
});

const durabilityDemo = obj<DurabilityDemoResult>({
  how: str,
  rows: list('rows', obj<DurabilityRow>({ queueType: str, deliveryMode: str, confirmed: num, survived: num, expected: num })),
});

const bench = obj<BenchResult>({
  runs: list(
    'runs',
    obj<BenchModeResult>({ label: str, publishRatePerSec: nullNum, consumeRatePerSec: nullNum, confirmLatency: latency, e2eLatency: latency }),
  ),
});

const chaosTotals = obj<ChaosTotals>({
  attempted: num,
  written: num,
  confirmed: num,
  read: num,
  lost: num,
  silentlyLost: num,
  indeterminateUnread: num,
  recovered: num,
  duplicated: num,
  duplicateDeliveries: num,
});

const chaos = obj<ChaosResult>({
  options: obj<ChaosOptions>({ queuePrefix: str }),
  durationMs: num,
  totals: chaosTotals,
  control: opt(nullOr(chaosTotals)),
  unexpected: opt(num),
  faults: list(
    'faults',
    obj<FaultRecord>({
      index: num,
      kind: str,
      target: str,
      nodes: list('node names', str),
      reason: str,
      issuedAtMs: num,
      appliedAtMs: nullNum,
      restoredAtMs: nullNum,
      wholeAtMs: nullNum,
      leadersBefore: record('node names or nulls', nullStr),
      leadersAfter: record('node names or nulls', nullStr),
      error: nullStr,
    }),
  ),
  availability: list('fault availabilities', obj<FaultAvailability>({ index: num, stallMs: num, healToConfirmMs: opt(nullNum) })),
  samples: list('samples', obj<ChaosSample>({ tMs: num, written: num, confirmed: num, consumed: num, inFlight: num })),
});

const audit = obj<AuditResult>({
  counts: opt(obj<AuditResult['counts']>({ pass: opt(num), warn: opt(num), fail: opt(num) })),
  items: opt(list('items', obj<AuditItem>({ status: opt(str), object: opt(str), message: opt(str) }))),
});

const verify = obj<{ reconciliation: Reconciliation }>({
  reconciliation: obj<Reconciliation>({
    lost: opt(num),
    silentlyLost: opt(num),
    duplicated: opt(num),
    // verify prints no ok of its own: this is its verdict.
    verdict: obj<Reconciliation['verdict']>({ ok: bool, reasons: opt(strings) }),
  }),
});

/**
 * Every kind an rmq-bench command prints with --json (and `producer --report` writes), with what
 * the report reads of it beyond VERDICT (ok, problems, reasons); null: nothing more (no chart, the fallback figures).
 */
export const DOC_SHAPES = {
  'alarm-demo': alarmDemo,
  audit,
  bench,
  chaos,
  'cluster-down': null,
  'cluster-image': null,
  'cluster-reset': null,
  'cluster-status': null,
  'cluster-up': null,
  compare,
  consumer: obj<ConsumerResult>({ received: opt(num), processed: opt(num), duplicatesSkipped: opt(num) }),
  'consumer-crash': consumerCrash,
  'consumer-timeout-demo': consumerTimeoutDemo,
  'delayed-retry-demo': delayedRetryDemo,
  'dlq-demo': dlqDemo,
  'dlq-inspect': obj<{ queue: string; total: number }>({ queue: opt(str), total: opt(num) }),
  'dlq-replay': obj<ReplayResult>({ replayed: opt(num), skipped: opt(num), leftInQueue: opt(num) }),
  'durability-demo': durabilityDemo,
  failover: obj<FailoverResult>({ fault: opt(str), oldLeader: opt(str), newLeader: opt(nullStr), electionMs: opt(nullNum) }),
  'prefetch-demo': prefetchDemo,
  producer: obj<PublisherResult>({ written: opt(num), confirmed: opt(num), nacked: opt(num), indeterminate: opt(num) }),
  'producer-crash': producerCrash,
  'producer-outbox': null,
  'producer-report': null,
  report: obj<ReportSummary>({ documents: opt(list('documents', obj<SummaryDocument>({ status: opt(str) }))) }),
  'retry-demo': retryDemo,
  verify,
  watch: null,
} satisfies Record<string, Shape | null>;

export type KnownKind = keyof typeof DOC_SHAPES;

/**
 * Where a document of this kind differs from what the report reads, in document order: every
 * document's `ok`; a known kind's verdict fields and its own (DOC_SHAPES). Empty: it matches. Pure.
 */
export function shapeMismatches(kind: string, doc: Readonly<Record<string, unknown>>): Mismatch[] {
  const out: Mismatch[] = [];
  if (!Object.hasOwn(DOC_SHAPES, kind)) {
    ANY_DOCUMENT.check(doc, '', out);
    return out;
  }
  VERDICT.check(doc, '', out);
  DOC_SHAPES[kind as KnownKind]?.check(doc, '', out);
  return out;
}

/** One mismatch in words: "runs is a string, expected an array of runs". */
export const mismatchText = (m: Mismatch): string => `${m.path} is ${m.found}, expected ${m.expected}`;

const MAX_PROBLEM_CHARS = 150;

/**
 * The first mismatches in words, as many as fit in one line of about 150 characters (at least
 * one), then how many more: "runs[0].run is missing, expected a number; and 3 more". Pure.
 */
export function mismatchesText(mismatches: readonly Mismatch[]): string {
  const shown: string[] = [];
  for (const m of mismatches) {
    const text = mismatchText(m);
    const more = mismatches.length - shown.length - 1;
    const tail = more > 0 ? `; and ${more} more` : '';
    if (shown.length > 0 && [...shown, text].join('; ').length + tail.length > MAX_PROBLEM_CHARS) break;
    shown.push(text);
  }
  const rest = mismatches.length - shown.length;
  return `${shown.join('; ')}${rest > 0 ? `; and ${rest} more` : ''}`;
}
