/**
 * consumer-timeout-demo, the pure part: the options, what was measured, and the checks of
 * RabbitMQ's own claims against it: 4.3's (rabbitmq-server's consumer_timeouts.md: the broker
 * cancels the consumer and keeps the channel open), and before 4.3 the channel closed instead
 * (PRECONDITION_FAILED; 4.3.7's release notes call it the pre-4.3.0 behavior). No I/O: the
 * runner (consumer-timeout-demo.ts) fills these records in.
 */

import { hasFeature } from '../../broker-versions.js';

/** How the broker ends a consumer past its timeout: 4.3 cancels it (basic.cancel); before 4.3 it closes the channel. */
export type TimeoutEnding = 'cancel' | 'channel-close';

/** The ending a broker of `version` is judged by. Pure. */
export function timeoutEndingOf(version: string): TimeoutEnding {
  return hasFeature(version, 'consumer-timeout-cancel') ? 'cancel' : 'channel-close';
}

/**
 * Before 4.3, how often the broker looks for deliveries past their timeout ("evaluated
 * periodically, at one minute intervals. Values lower than one minute are not supported":
 * RabbitMQ's consumers guide before 4.3). 4.3 arms a timer per delivery instead.
 */
export const TIMEOUT_CHECK_INTERVAL_MS = 60_000;

/** Where the claims come from, for the table's header. */
export const CLAIMS_SOURCE: Record<TimeoutEnding, string> = {
  cancel: 'rabbitmq-server consumer_timeouts.md, 4.3',
  'channel-close': "before 4.3: RabbitMQ's consumers guide, and 4.3.7's release notes",
};

/** The three ways 4.3 takes a consumer timeout for a quorum queue (rabbitmq.conf is the fourth, cluster-wide). */
export const TIMEOUT_VIAS = ['queue-argument', 'policy', 'consumer-argument'] as const;
export type TimeoutVia = (typeof TIMEOUT_VIAS)[number];

export const VIA_DESCRIPTIONS: Record<TimeoutVia, string> = {
  'queue-argument': 'queue argument x-consumer-timeout (queue.declare)',
  policy: "policy key consumer-timeout (a temporary policy on the demo's queue)",
  'consumer-argument': 'consumer argument x-consumer-timeout (basic.consume): it overrides the other two',
};

export interface ConsumerTimeoutDemoOptions {
  vias: TimeoutVia[];
  timeoutMs: number;
  /** Messages per queue. */
  count: number;
  /** Which message (1-based) takes longer than the timeout. */
  slowIndex: number;
  /** The work of every other message. */
  workMs: number;
  /** The work of the slow message (above timeoutMs). */
  slowWorkMs: number;
  /** How long both consumers are watched once the handling one is done and the naive one's slow work is over. */
  observeMs: number;
  /** Accepted lateness of the broker's cancel past the timeout. */
  toleranceMs: number;
}

/** A delivery as a consumer saw it, in ms since the demo's consumers started. */
export interface SeenDelivery {
  atMs: number;
  messageId: string;
  redelivered: boolean;
  /** x-delivery-count (absent = 0). */
  deliveryCount: number;
  /** x-acquired-count (absent = 0). */
  acquiredCount: number;
}

/** The naive consumer: amqplib defaults, manual ack when the work is done, nothing done on a cancel or a channel close. */
export interface NaiveRun {
  queue: string;
  deliveries: SeenDelivery[];
  /** message id → times its work ran. */
  processed: Record<string, number>;
  slowDeliveredAtMs: number | null;
  /**
   * The earliest the broker can have handed the slow message out: with prefetch 1, the naive
   * consumer's ack before it (or its subscription). Under load the delivery reaches the consumer's
   * callback long after the broker's timer started; this bounds the timer's start from below.
   * Absent in documents from before it was recorded.
   */
  slowEarliestAtMs?: number | null;
  /** The broker's basic.cancel (amqplib: a null message). */
  cancelAtMs: number | null;
  /** A passive queue.declare on the same channel right after the cancel: the channel was still open. */
  channelOpenAfterCancel: boolean | null;
  /** The ack it sent for the slow message when its work ended (after the cancel). */
  lateAckAtMs: number | null;
  channelClosedAtMs: number | null;
  /** What amqplib emitted as the channel's error, if it did. */
  channelError: string | null;
  lastProcessedAtMs: number | null;
}

/** rmq-bench's own consumer: on a cancel it closes the connection, subscribes again, and its idempotent store absorbs the redelivery. */
export interface HandlingRun {
  queue: string;
  deliveries: SeenDelivery[];
  /** message id → times its work ran (the store's log). */
  processed: Record<string, number>;
  duplicatesAbsorbed: number;
  cancels: number;
  /** Channels the broker closed under it (a consumer timeout before 4.3); it subscribed again after each. */
  channelsClosed?: number;
  /** The broker ended its subscription: a cancel, or (before 4.3) a closed channel. */
  cancelAtMs: number | null;
  resubscribedAtMs: number | null;
  finishedAtMs: number;
}

/** One queue's state as the broker reported it at the end (a passive queue.declare: no statistics lag). */
export interface QueueEnd {
  ready: number;
  consumers: number;
}

export interface Check {
  claim: string;
  held: boolean;
  measured: string;
}

export interface ViaResult {
  via: TimeoutVia;
  setBy: string;
  timeoutMs: number;
  messageIds: string[];
  slowId: string;
  naive: NaiveRun;
  handling: HandlingRun;
  naiveEnd: QueueEnd;
  handlingEnd: QueueEnd;
  endAtMs: number;
  /** The slow message's delivery to the broker's cancel, as the naive consumer saw them. */
  measuredTimeoutMs: number | null;
  /** How long the naive consumer processed nothing, until the end, with messages waiting in its queue. */
  naiveIdleMs: number | null;
  /** Waiting messages in the naive queue that its consumer had already processed (a second processing to come). */
  naiveProcessedButWaiting: number;
  /**
   * The consumers whose held delivery the broker never timed out, by its own word: the naive one
   * not ended (no cancel, or before 4.3 no closed channel), its ack of the slow message taken, and
   * still listed by the broker at the end; the handling one never ended, and the slow message
   * never handed out again. A miss of RabbitMQ's, not of the consumers: seen on 4.3.6 under load,
   * one queue in a run now and then. Absent in documents from before it was recorded.
   */
  brokerMissed?: ('naive' | 'handling')[];
  checks: Check[];
  ok: boolean;
  problems: string[];
}

export interface QueueSample {
  tMs: number;
  /** queue name → ready messages. */
  ready: Record<string, number>;
}

/** The options it ran with (but the ways, which are the runs), and what it measured. */
/** One cluster's run, when the demo ran on several side by side (--clusters). */
export interface ConsumerTimeoutVersionRun {
  cluster: string;
  brokerVersion: string;
  ending: TimeoutEnding;
  /** The slow message's work there (before 4.3 it outlasts the once-a-minute check). */
  slowWorkMs: number;
  runs: ViaResult[];
  ok: boolean;
}

export interface ConsumerTimeoutDemoResult extends Omit<ConsumerTimeoutDemoOptions, 'vias'> {
  /** --clusters: every cluster's run, side by side (the fields beside it are the first one's); absent for one cluster. */
  versions?: ConsumerTimeoutVersionRun[];
  brokerVersion: string;
  /** How the broker ends a timed-out consumer, by its version: what the claims were checked against. */
  ending?: TimeoutEnding;
  runs: ViaResult[];
  samples: QueueSample[];
  ok: boolean;
}

/** Several clusters' results as one: the first's fields, every run in `versions`, ok when each is. Pure. */
export function sideBySideTimeouts(runs: readonly { cluster: string; result: ConsumerTimeoutDemoResult }[]): ConsumerTimeoutDemoResult {
  const first = runs[0]!.result;
  const versions = runs.map(({ cluster, result: r }) => ({
    cluster,
    brokerVersion: r.brokerVersion,
    ending: r.ending ?? timeoutEndingOf(r.brokerVersion),
    slowWorkMs: r.slowWorkMs,
    runs: r.runs,
    ok: r.ok,
  }));
  return { ...first, versions, ok: versions.every((v) => v.ok) };
}

/** Where the consumer timeout is set for a via: queue arguments, a policy definition, consumer arguments. Pure. */
export function timeoutSetting(
  via: TimeoutVia,
  timeoutMs: number,
): { queueArguments: Record<string, number>; policy: Record<string, number> | null; consumerArguments: Record<string, number> } {
  return {
    queueArguments: via === 'queue-argument' ? { 'x-consumer-timeout': timeoutMs } : {},
    policy: via === 'policy' ? { 'consumer-timeout': timeoutMs } : null,
    consumerArguments: via === 'consumer-argument' ? { 'x-consumer-timeout': timeoutMs } : {},
  };
}

export function messageIdsFor(via: TimeoutVia, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `ct-${via}-${i + 1}`);
}

/**
 * How much earlier than the timeout the cancel may come, as the consumer measures it. The
 * broker's clock starts when it hands the message out, which is after the naive consumer's ack
 * before it (prefetch 1, slowEarliestAtMs) and before the delivery reaches the consumer's callback
 * (under load, seen 800 ms later). The early bound is taken from that ack, so the slack only
 * covers the clocks' granularity; 500 ms also serves the channel-close check before 4.3.
 */
export const EARLY_SLACK_MS = 500;

const secs = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;

function redeliveryOf(deliveries: readonly SeenDelivery[], id: string): SeenDelivery | undefined {
  return deliveries.filter((d) => d.messageId === id)[1];
}

/** The counts, and the claims checked against them. Pure. */
export function assessVia(
  o: Pick<ConsumerTimeoutDemoOptions, 'timeoutMs' | 'toleranceMs'>,
  r: Omit<ViaResult, 'measuredTimeoutMs' | 'naiveIdleMs' | 'naiveProcessedButWaiting' | 'checks' | 'ok' | 'problems'>,
  ending: TimeoutEnding = 'cancel',
): ViaResult {
  const { naive, handling } = r;
  // The broker's end of the naive consumer: its basic.cancel (4.3), or its channel closed (before).
  const endedAtMs = ending === 'cancel' ? naive.cancelAtMs : naive.channelClosedAtMs;
  const measuredTimeoutMs = endedAtMs !== null && naive.slowDeliveredAtMs !== null ? endedAtMs - naive.slowDeliveredAtMs : null;
  // From the earliest the broker can have handed the slow message out: what the early bound is checked against.
  const earliestAtMs = naive.slowEarliestAtMs ?? naive.slowDeliveredAtMs;
  const sinceEarliestMs = endedAtMs !== null && earliestAtMs !== null ? endedAtMs - earliestAtMs : null;
  const accepted = (lowMs: number, highMs: number): string =>
    sinceEarliestMs === null || sinceEarliestMs === measuredTimeoutMs
      ? `(accepted ${lowMs} to ${highMs})`
      : `(accepted up to ${highMs}); ${sinceEarliestMs.toFixed(0)} ms from the ack before it, the earliest the broker can have handed it out (accepted from ${lowMs})`;
  const handlingEnded = handling.cancels + (handling.channelsClosed ?? 0);
  const naiveIdleMs = r.naiveEnd.ready > 0 ? r.endAtMs - (naive.lastProcessedAtMs ?? 0) : null;
  const processedIds = Object.keys(naive.processed).filter((id) => (naive.processed[id] ?? 0) > 0);
  const naiveProcessedButWaiting = Math.max(0, r.naiveEnd.ready - (r.messageIds.length - processedIds.length));
  const redelivery = redeliveryOf(handling.deliveries, r.slowId);
  const early = EARLY_SLACK_MS;

  const checks: Check[] = [
    {
      claim: 'a delivery held past the timeout is returned to the queue, for any consumer',
      held: redelivery !== undefined,
      measured:
        redelivery === undefined
          ? `${r.slowId} was not delivered again to the handling consumer`
          : `${r.slowId} delivered again ${secs(redelivery.atMs - (handling.cancelAtMs ?? redelivery.atMs))} after the cancel, with x-delivery-count ${redelivery.deliveryCount} and x-acquired-count ${redelivery.acquiredCount}`,
    },
    ending === 'cancel'
      ? {
          claim: 'AMQP 0.9.1 with consumer_cancel_notify: the broker sends basic.cancel and the channel stays open',
          held: naive.cancelAtMs !== null && naive.channelOpenAfterCancel === true && handling.cancels >= 1,
          measured:
            naive.cancelAtMs === null
              ? 'no basic.cancel reached the naive consumer'
              : `basic.cancel at ${secs(naive.cancelAtMs)}; the channel ${naive.channelOpenAfterCancel ? 'answered a passive declare after it' : 'was closed'}; the handling consumer was cancelled ${handling.cancels} time(s)`,
        }
      : {
          claim: 'the broker closes the channel (PRECONDITION_FAILED: delivery acknowledgement timed out); the connection stays open',
          held: naive.channelClosedAtMs !== null && /PRECONDITION/i.test(naive.channelError ?? '') && (handling.channelsClosed ?? 0) >= 1,
          measured:
            naive.channelClosedAtMs === null
              ? "the naive consumer's channel was not closed"
              : `the naive consumer's channel closed at ${secs(naive.channelClosedAtMs)} (${naive.channelError ?? 'no reason given'}); the handling consumer's channel was closed ${handling.channelsClosed ?? 0} time(s), it subscribed again each time`,
        },
    ending === 'cancel'
      ? {
          claim: `the timeout fires at the value set (${o.timeoutMs} ms)`,
          held:
            measuredTimeoutMs !== null &&
            sinceEarliestMs !== null &&
            sinceEarliestMs >= o.timeoutMs - early &&
            measuredTimeoutMs <= o.timeoutMs + o.toleranceMs,
          measured:
            measuredTimeoutMs === null
              ? 'not measured (no cancel)'
              : `delivery → cancel ${measuredTimeoutMs.toFixed(0)} ms ${accepted(o.timeoutMs - early, o.timeoutMs + o.toleranceMs)}`,
        }
      : {
          claim: `the timeout (${o.timeoutMs} ms) is checked once a minute: the channel closes within a minute after it`,
          held:
            measuredTimeoutMs !== null &&
            sinceEarliestMs !== null &&
            sinceEarliestMs >= o.timeoutMs - early &&
            measuredTimeoutMs <= o.timeoutMs + TIMEOUT_CHECK_INTERVAL_MS + o.toleranceMs,
          measured:
            measuredTimeoutMs === null
              ? 'not measured (no closed channel)'
              : `delivery → channel closed ${measuredTimeoutMs.toFixed(0)} ms ${accepted(o.timeoutMs - early, o.timeoutMs + TIMEOUT_CHECK_INTERVAL_MS + o.toleranceMs)}`,
        },
  ];

  const problems: string[] = [];
  // The broker's misses first: what the claims below then did not see, said once in its words.
  const brokerMissed: ('naive' | 'handling')[] = [];
  if (endedAtMs === null && (naive.processed[r.slowId] ?? 0) >= 1 && naive.channelError === null && r.naiveEnd.consumers >= 1) {
    brokerMissed.push('naive');
    problems.push(
      `RabbitMQ never timed out ${r.slowId} held by the naive consumer: it took the ack after ${r.slowId}'s work (past the ${o.timeoutMs} ms timeout) and still lists the consumer on ${naive.queue} at the end`,
    );
  }
  if (handlingEnded === 0 && handling.deliveries.filter((d) => d.messageId === r.slowId).length === 1 && (handling.processed[r.slowId] ?? 0) === 1) {
    brokerMissed.push('handling');
    problems.push(
      `RabbitMQ never timed out ${r.slowId} held by rmq-bench's consumer: it took the ack after ${r.slowId}'s work (past the ${o.timeoutMs} ms timeout) and never handed it out again`,
    );
  }
  const lost = r.messageIds.filter((id) => (handling.processed[id] ?? 0) === 0);
  const twice = r.messageIds.filter((id) => (handling.processed[id] ?? 0) > 1);
  if (lost.length > 0) problems.push(`the handling consumer never processed ${lost.length}: ${lost.slice(0, 5).join(', ')}`);
  if (twice.length > 0) problems.push(`the handling consumer processed ${twice.length} more than once: ${twice.slice(0, 5).join(', ')}`);
  if (r.handlingEnd.ready > 0) problems.push(`${r.handlingEnd.ready} messages left in ${r.handling.queue}`);
  // Once it stopped, the broker must list no consumer: a cancelled one left behind holds a connection for nothing.
  if (r.handlingEnd.consumers > 0)
    problems.push(`${r.handlingEnd.consumers} consumer(s) still registered on ${r.handling.queue} after the handling consumer stopped`);
  if (handlingEnded === 0)
    problems.push(`the handling consumer was never ${ending === 'cancel' ? 'cancelled' : 'cancelled nor had its channel closed'}: the demo showed nothing`);
  for (const c of checks) if (!c.held) problems.push(`claim not seen: ${c.claim} (${c.measured})`);
  return { ...r, measuredTimeoutMs, naiveIdleMs, naiveProcessedButWaiting, brokerMissed, checks, ok: problems.length === 0, problems };
}
