import type { BrokerInfo } from '../../cluster/broker/broker-info.js';
import type { StatusResult } from '../../cluster/lifecycle/status.js';
import type { UpResult } from '../../cluster/lifecycle/up.js';
import type { OutboxProducerResult } from '../../client/outbox-producer.js';
import type { SCHEMA_VERSION } from '../../schema-version.js';
import type { AuditResult } from '../../scenarios/broker-tools/audit.js';
import type { ReplayResult } from '../../scenarios/broker-tools/dlq-tools.js';
import type { ConsumerCrashResult } from '../../scenarios/crashes/consumer-crash.js';
import type { ProducerCrashResult } from '../../scenarios/crashes/producer-crash-result.js';
import type { AlarmDemoResult } from '../../scenarios/demos/alarm-plan.js';
import type { ConsumerTimeoutDemoResult } from '../../scenarios/demos/consumer-timeout-plan.js';
import type { DelayedRetryDemoResult } from '../../scenarios/demos/delayed-retry-plan.js';
import type { DeliveryLimitDemoResult } from '../../scenarios/demos/delivery-limit-plan.js';
import type { DurabilityDemoResult } from '../../scenarios/demos/durability-demo.js';
import type { PrefetchDemoResult } from '../../scenarios/demos/prefetch-demo.js';
import type { BenchResult } from '../../scenarios/traffic/bench.js';
import type { ProducerReport } from '../../scenarios/traffic/producer.js';
import type { WatchView } from '../../scenarios/traffic/watch.js';
import type { ChaosResult } from '../../scenarios/under-faults/chaos-plan.js';
import type { CompareResult } from '../../scenarios/under-faults/compare.js';
import type { FailoverResult } from '../../scenarios/under-faults/failover.js';
import type { ErrorDocument } from '../json.js';
import type { Kind, ResultOf } from '../kinds.js';
import type { ThresholdKind } from '../threshold-measures.js';
import type { ThresholdReport } from '../thresholds.js';
import type { ClusterDownResult } from '../kinds/cluster-down/view.js';
import type { ClusterImageResult } from '../kinds/cluster-image/view.js';
import type { ClusterResetResult } from '../kinds/cluster-reset/view.js';
import type { ConsumerDocument } from '../kinds/consumer/view.js';
import type { DlqDemoDocument } from '../kinds/dlq-demo/view.js';
import type { DlqInspectResult } from '../kinds/dlq-inspect/view.js';
import type { ProducerDocument } from '../kinds/producer/view.js';
import type { ReportSummary } from '../kinds/report/view.js';
import type { RetryDemoDocument } from '../kinds/retry-demo/view.js';
import type { VerifyResult } from '../kinds/verify/view.js';

/**
 * The --json documents as types, for the JSON Schema (scripts/build-schema.mjs writes
 * schema/documents.schema.json from `Documents`; the package ships it). Each kind's result is
 * named here by its type; `ResultsMatchTheRegistry` does not compile when a kind of kinds.ts is
 * missing here, or its type is not the one its view prints.
 */
export interface Results {
  'alarm-demo': AlarmDemoResult;
  audit: AuditResult;
  bench: BenchResult;
  chaos: ChaosResult;
  'cluster-down': ClusterDownResult;
  'cluster-image': ClusterImageResult;
  'cluster-reset': ClusterResetResult;
  'cluster-status': StatusResult;
  'cluster-up': UpResult;
  compare: CompareResult;
  consumer: ConsumerDocument;
  'consumer-crash': ConsumerCrashResult;
  'consumer-timeout-demo': ConsumerTimeoutDemoResult;
  'delayed-retry-demo': DelayedRetryDemoResult;
  'delivery-limit-demo': DeliveryLimitDemoResult;
  'dlq-demo': DlqDemoDocument;
  'dlq-inspect': DlqInspectResult;
  'dlq-replay': ReplayResult;
  'durability-demo': DurabilityDemoResult;
  failover: FailoverResult;
  'prefetch-demo': PrefetchDemoResult;
  producer: ProducerDocument;
  'producer-crash': ProducerCrashResult;
  'producer-outbox': OutboxProducerResult;
  'producer-report': Omit<ProducerReport, 'schemaVersion' | 'kind'>;
  report: ReportSummary;
  'retry-demo': RetryDemoDocument;
  verify: VerifyResult;
  watch: WatchView;
}

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Holds<T extends true> = T;
/** Compiles only while Results names every kind of the registry, each with its view's result type. */
export type ResultsMatchTheRegistry = Holds<Same<Results, { [K in Kind]: ResultOf<K> }>>;

/** What every document carries first (report/json.ts). */
interface Head<K extends string> {
  schemaVersion: typeof SCHEMA_VERSION;
  kind: K;
  broker: BrokerInfo | null;
}

/** The kinds whose commands take thresholds (--max-lost ...): their document lists the checks when any is given. */
type VerdictKind = 'compare' | 'chaos' | 'failover' | 'producer-crash' | 'consumer-crash' | 'verify';
/** Compiles only while VerdictKind names the kinds of threshold-measures.ts. */
export type VerdictKindsMatch = Holds<Same<VerdictKind, ThresholdKind>>;

/** What a verdict command adds with thresholds given (cli/verdict-options.ts): the checks, and the verdict with them (failover has none of its own). */
interface WithThresholds {
  ok?: boolean;
  thresholds?: ThresholdReport;
}

/** Every kind's document, by kind, and the error document a --json command prints when it fails. */
export type Documents = { [K in keyof Results]: Head<K> & Results[K] & (K extends VerdictKind ? WithThresholds : unknown) } & {
  error: Head<'error'> & ErrorDocument;
};
