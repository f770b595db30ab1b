import type { DelayedRetryType, DelayedRetryVia } from './delayed-retry-settings.js';

/**
 * delayed-retry-demo's data and its pure parts: the plan of returns and the delay each should
 * get, the check of a measured delay, the broker versions that take delayed retry, and the
 * setup (policy or queue arguments). No I/O here: delayed-retry-demo.ts runs the plan.
 */

/** How the consumer gives a delivery back. */
type ReturnKind = 'reject' | 'close' | 'nack';
type ReturnClass = 'failed' | 'returned';

export interface DelayedRetryDemoOptions {
  type: DelayedRetryType;
  minMs: number;
  maxMs: number;
  /** Messages published (they go through the plan together). */
  count: number;
  /** Returns of the kinds the type names, per message. */
  returns: number;
  via: DelayedRetryVia;
  /** Accepted lateness of each redelivery over the formula. */
  toleranceMs: number;
  /** Testing: leave delayed retry off (no policy, no arguments); the verdict must fail. */
  skipSetup: boolean;
}

export interface PlannedReturn {
  kind: ReturnKind;
  class: ReturnClass;
  /** Whether the configured type delays this return. */
  delayed: boolean;
  /** x-delivery-count the redelivery carries (0 = header absent). */
  deliveryCount: number;
  expectedMs: number;
}

export interface MeasuredRedelivery {
  messageId: string;
  delayMs: number;
  deliveryCount: number;
}

export interface RoundResult extends PlannedReturn {
  /** 1-based: the n-th time each message was given back. */
  index: number;
  measured: MeasuredRedelivery[];
  /** Highest messages_delayed the management API showed while waiting (its stats lag up to 5 s). */
  messagesDelayedSeen: number | null;
  ok: boolean;
}

export interface DelayedRetryDemoResult {
  brokerVersion: string;
  via: DelayedRetryVia;
  queue: string;
  type: DelayedRetryType;
  minMs: number;
  maxMs: number;
  toleranceMs: number;
  /** Early slack allowed below the formula (clock and scheduling). */
  earlySlackMs: number;
  setup: {
    /** The temporary policy (via policy), or the queue arguments (via arguments). */
    name: string;
    priority: number | null;
    definition: Record<string, unknown>;
    /** Keys copied from dlx-orders so that its DLX and delivery-limit stay in force. */
    keptFrom: string | null;
    keptKeys: string[];
    /** What the broker reports for the queue while the demo runs. */
    effective: Record<string, unknown> | null;
    skipped: boolean;
  };
  deliveryLimit: number;
  messages: string[];
  rounds: RoundResult[];
  /** Every delivery, for timelines: ms since the first publish. */
  deliveries: { messageId: string; atMs: number; round: number }[];
  processed: number;
  ok: boolean;
  problems: string[];
}

export const TEMP_POLICY = 'rmq-bench-delayed-retry';
export const POLICY_PRIORITY = 15;
const POLICY_QUEUE = 'demo.orders';
const ARGUMENTS_QUEUE = 'demo.delayed-retry';
export const EARLY_SLACK_MS = 100;
/** quorum queues' delivery-limit when none is set (RabbitMQ 4.x). */
export const DEFAULT_DELIVERY_LIMIT = 20;

function classOf(kind: ReturnKind): ReturnClass {
  return kind === 'nack' ? 'returned' : 'failed';
}

/** Delay of one redelivery: min × x-delivery-count (at least 1), capped at max. Pure. */
export function delayFor(minMs: number, maxMs: number, deliveryCount: number): number {
  return Math.min(minMs * Math.max(1, deliveryCount), maxMs);
}

/**
 * The returns the consumer makes, in order: `returns` of the kinds the type names (failed:
 * reject and close in turn; returned: nack; all: reject, nack, close in turn), then for a type
 * other than all one return of the other class, which must come back at once. Pure.
 */
export function returnPlan(type: DelayedRetryType, returns: number, minMs: number, maxMs: number): PlannedReturn[] {
  const cycle: ReturnKind[] = type === 'failed' ? ['reject', 'close'] : type === 'returned' ? ['nack'] : ['reject', 'nack', 'close'];
  const kinds = Array.from({ length: returns }, (_, i) => cycle[i % cycle.length]!);
  if (type === 'failed') kinds.push('nack');
  if (type === 'returned') kinds.push('reject');
  let count = 0;
  return kinds.map((kind) => {
    const cls = classOf(kind);
    if (cls === 'failed') count += 1;
    const delayed = type === 'all' || type === cls;
    return { kind, class: cls, delayed, deliveryCount: count, expectedMs: delayed ? delayFor(minMs, maxMs, count) : 0 };
  });
}

/** Problems with one measured delay against the plan, or none. Pure. */
export function checkDelay(measuredMs: number, expectedMs: number, toleranceMs: number, earlySlackMs = EARLY_SLACK_MS): string | undefined {
  if (measuredMs < expectedMs - earlySlackMs) return `came back after ${Math.round(measuredMs)} ms, before the ${expectedMs} ms delay`;
  if (measuredMs > expectedMs + toleranceMs) return `came back after ${Math.round(measuredMs)} ms, more than ${expectedMs} + ${toleranceMs} ms`;
  return undefined;
}

/** "4.3.6" → [4, 3, 6]; undefined when it does not look like a version. Pure. */
export function parseVersion(v: string): [number, number, number] | undefined {
  const m = /^(\d+)\.(\d+)(?:\.(\d+))?/.exec(v.trim());
  if (!m) return undefined;
  return [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
}

/**
 * Whether a broker of this version takes delayed retry the given way: queue arguments from
 * 4.3.0, policy keys from 4.3.1. Returns the explanation when it does not. Pure.
 */
export function delayedRetryUnsupported(version: string, via: DelayedRetryVia): string | undefined {
  const v = parseVersion(version);
  if (!v) return `cannot tell the broker's version from '${version}'`;
  const need: [number, number, number] = via === 'policy' ? [4, 3, 1] : [4, 3, 0];
  const older = v[0] !== need[0] ? v[0] < need[0] : v[1] !== need[1] ? v[1] < need[1] : v[2] < need[2];
  if (!older) return undefined;
  if (via === 'policy' && v[0] === 4 && v[1] === 3) {
    return `RabbitMQ ${version} takes native delayed retry only as queue arguments (the delayed-retry-* policy keys came in 4.3.1): use --via arguments, or upgrade`;
  }
  return `RabbitMQ ${version} has no native delayed retry (x-delayed-retry-* queue arguments need 4.3.0, the policy keys 4.3.1); retry-demo shows the TTL-queue way, which works on any version`;
}

/** The temporary policy's definition: dlx-orders' keys, plus delayed retry. Pure. */
export function policyDefinition(base: Record<string, unknown>, type: DelayedRetryType, minMs: number, maxMs: number): Record<string, unknown> {
  return { ...base, 'delayed-retry-type': type, 'delayed-retry-min': minMs, 'delayed-retry-max': maxMs };
}

export function numberOf(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  return undefined;
}

/** dlx-orders' definition (empty when there is none): the keys the temporary policy must carry too. */
export interface KeptPolicy {
  base: Record<string, unknown>;
  keptFrom: string | null;
}

/** The queue the demo uses: demo.orders under the temporary policy, or its own queue with arguments. Pure. */
export function demoQueue(via: DelayedRetryVia): string {
  return via === 'policy' ? POLICY_QUEUE : ARGUMENTS_QUEUE;
}

/**
 * The setup: the temporary policy (dlx-orders' keys plus delayed retry), or the queue's arguments
 * (quorum, dlx-orders' dead-letter exchange, the delivery-limit, and delayed retry unless
 * skipSetup). Pure.
 */
export function demoSetup(o: DelayedRetryDemoOptions, queue: string, kept: KeptPolicy, deliveryLimit: number): DelayedRetryDemoResult['setup'] {
  const { base, keptFrom } = kept;
  const definition =
    o.via === 'policy'
      ? policyDefinition(base, o.type, o.minMs, o.maxMs)
      : {
          'x-queue-type': 'quorum',
          ...(base['dead-letter-exchange'] === undefined ? {} : { 'x-dead-letter-exchange': base['dead-letter-exchange'] }),
          'x-delivery-limit': deliveryLimit,
          ...(o.skipSetup ? {} : { 'x-delayed-retry-type': o.type, 'x-delayed-retry-min': o.minMs, 'x-delayed-retry-max': o.maxMs }),
        };
  return {
    name: o.via === 'policy' ? TEMP_POLICY : `${queue} (queue arguments)`,
    priority: o.via === 'policy' ? POLICY_PRIORITY : null,
    definition,
    keptFrom,
    keptKeys: Object.keys(base),
    effective: null,
    skipped: o.skipSetup,
  };
}
