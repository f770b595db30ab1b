import { describe, expect, it } from 'vitest';
import { KIND_VIEWS } from '../../src/report/kinds.js';
import { columns, TEXT_COLUMNS } from '../../src/report/text-wrap.js';
import { BENCH_RESULT } from './fixtures/bench.js';
import { chaosResult } from './fixtures/chaos.js';
import { CONSUMER_CRASH_RESULT } from './fixtures/consumer-crash.js';
import { delayedRetryResult } from './fixtures/delayed-retry.js';
import { DLQ_RESULT } from './fixtures/dlq.js';
import { DURABILITY_RESULT } from './fixtures/durability.js';
import { PREFETCH_RESULT } from './fixtures/prefetch.js';
import { PRODUCER_CRASH_RESULT } from './fixtures/producer-crash.js';
import { ladderResult, RETRY_RESULT } from './fixtures/retry.js';
import { compareWithFault } from './fixtures/runs.js';

/**
 * Every terminal report at most TEXT_COLUMNS wide (text-wrap.ts), as pasted into docs/WORKSHOP.md:
 * each kind's printer, through its view, on the fixtures' documents, and on the same documents
 * with every string of prose (one with a space: problems, claims, what was measured, notes) made
 * three times as long, as a real run's can be.
 */

/** The document with every string that holds a space three times as long. Keys and one-word values (modes, node names) stay. */
function stretched<T>(doc: T): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return v.includes(' ') ? `${v} ${v} ${v}` : v;
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(doc) as T;
}

const samples: [name: string, render: () => string, renderStretched: () => string][] = [
  ['bench', () => KIND_VIEWS.bench.text(BENCH_RESULT), () => KIND_VIEWS.bench.text(stretched(BENCH_RESULT))],
  ['chaos', () => KIND_VIEWS.chaos.text(chaosResult()), () => KIND_VIEWS.chaos.text(stretched(chaosResult()))],
  ['compare', () => KIND_VIEWS.compare.text(compareWithFault()), () => KIND_VIEWS.compare.text(stretched(compareWithFault()))],
  ['consumer-crash', () => KIND_VIEWS['consumer-crash'].text(CONSUMER_CRASH_RESULT), () => KIND_VIEWS['consumer-crash'].text(stretched(CONSUMER_CRASH_RESULT))],
  [
    'delayed-retry-demo',
    () => KIND_VIEWS['delayed-retry-demo'].text(delayedRetryResult()),
    () => KIND_VIEWS['delayed-retry-demo'].text(stretched(delayedRetryResult())),
  ],
  ['dlq-demo', () => KIND_VIEWS['dlq-demo'].text(DLQ_RESULT), () => KIND_VIEWS['dlq-demo'].text(stretched(DLQ_RESULT))],
  ['durability-demo', () => KIND_VIEWS['durability-demo'].text(DURABILITY_RESULT), () => KIND_VIEWS['durability-demo'].text(stretched(DURABILITY_RESULT))],
  ['prefetch-demo', () => KIND_VIEWS['prefetch-demo'].text(PREFETCH_RESULT), () => KIND_VIEWS['prefetch-demo'].text(stretched(PREFETCH_RESULT))],
  ['producer-crash', () => KIND_VIEWS['producer-crash'].text(PRODUCER_CRASH_RESULT), () => KIND_VIEWS['producer-crash'].text(stretched(PRODUCER_CRASH_RESULT))],
  ['retry-demo', () => KIND_VIEWS['retry-demo'].text(RETRY_RESULT), () => KIND_VIEWS['retry-demo'].text(stretched(RETRY_RESULT))],
  ['retry-demo --backoff', () => KIND_VIEWS['retry-demo'].text(ladderResult()), () => KIND_VIEWS['retry-demo'].text(stretched(ladderResult()))],
];

const wide = (text: string): string[] => text.split('\n').filter((l) => columns(l) > TEXT_COLUMNS);

describe(`every report at most ${TEXT_COLUMNS} columns`, () => {
  it.each(samples)('%s', (_name, render, renderStretched) => {
    expect(render().split('\n').length).toBeGreaterThan(3);
    expect(wide(render())).toEqual([]);
    expect(wide(renderStretched())).toEqual([]);
  });
});
