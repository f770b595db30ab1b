import type { KindView } from './kind-view.js';
import { alarmDemo } from './kinds/alarm-demo/view.js';
import { audit } from './kinds/audit/view.js';
import { bench } from './kinds/bench/view.js';
import { chaos } from './kinds/chaos/view.js';
import { clusterDown } from './kinds/cluster-down/view.js';
import { clusterImage } from './kinds/cluster-image/view.js';
import { clusterReset } from './kinds/cluster-reset/view.js';
import { clusterStatus } from './kinds/cluster-status/view.js';
import { clusterUp } from './kinds/cluster-up/view.js';
import { compare } from './kinds/compare/view.js';
import { consumer } from './kinds/consumer/view.js';
import { consumerCrash } from './kinds/consumer-crash/view.js';
import { consumerTimeoutDemo } from './kinds/consumer-timeout-demo/view.js';
import { delayedRetryDemo } from './kinds/delayed-retry-demo/view.js';
import { deliveryLimitDemo } from './kinds/delivery-limit-demo/view.js';
import { dlqDemo } from './kinds/dlq-demo/view.js';
import { dlqInspect } from './kinds/dlq-inspect/view.js';
import { dlqReplay } from './kinds/dlq-replay/view.js';
import { durabilityDemo } from './kinds/durability-demo/view.js';
import { failover } from './kinds/failover/view.js';
import { prefetchDemo } from './kinds/prefetch-demo/view.js';
import { producer } from './kinds/producer/view.js';
import { producerCrash } from './kinds/producer-crash/view.js';
import { producerOutbox } from './kinds/producer-outbox/view.js';
import { producerReport } from './kinds/producer-report/view.js';
import { report } from './kinds/report/view.js';
import { retryDemo } from './kinds/retry-demo/view.js';
import { verify } from './kinds/verify/view.js';
import { watch } from './kinds/watch/view.js';

/**
 * Every kind of result rmq-bench prints with --json (its `kind`), each with its view
 * (report/kinds/<kind>/view.ts: its terminal report, charts, and what `rmq-bench report` reads of
 * it; the printers beside it in text.ts, the charts in charts.ts).
 * A kind is added here, once; `emit` takes only these kinds, each with its own result type.
 */
const VIEWS = {
  'alarm-demo': alarmDemo,
  audit,
  bench,
  chaos,
  'cluster-down': clusterDown,
  'cluster-image': clusterImage,
  'cluster-reset': clusterReset,
  'cluster-status': clusterStatus,
  'cluster-up': clusterUp,
  compare,
  consumer,
  'consumer-crash': consumerCrash,
  'consumer-timeout-demo': consumerTimeoutDemo,
  'delayed-retry-demo': delayedRetryDemo,
  'delivery-limit-demo': deliveryLimitDemo,
  'dlq-demo': dlqDemo,
  'dlq-inspect': dlqInspect,
  'dlq-replay': dlqReplay,
  'durability-demo': durabilityDemo,
  failover,
  'prefetch-demo': prefetchDemo,
  producer,
  'producer-crash': producerCrash,
  'producer-outbox': producerOutbox,
  'producer-report': producerReport,
  report,
  'retry-demo': retryDemo,
  verify,
  watch,
};

export type Kind = keyof typeof VIEWS;

/** The result a command of this kind prints (its --json document, less schemaVersion and kind). */
export type ResultOf<K extends Kind> = (typeof VIEWS)[K] extends KindView<infer R extends object> ? R : never;

/** The views, typed so that a kind's view is indexed with its own result type. */
export const KIND_VIEWS: { readonly [K in Kind]: KindView<ResultOf<K>> } = VIEWS;

/** Every kind, in the registry's order. */
export const KINDS: readonly Kind[] = Object.keys(KIND_VIEWS).filter(isKind);

/** A kind rmq-bench prints (a --json document's `kind` may be any string). */
export function isKind(kind: string): kind is Kind {
  return Object.hasOwn(KIND_VIEWS, kind);
}
