/**
 * delivery-limit-demo, the pure part: the consumer actions (AMQP 0-9-1) and settlement outcomes
 * (AMQP 1.0), the rule RabbitMQ documents for each (4.3's, and 4.0's before it: RULE_SETS), what
 * one trial saw, its fate, and whether it agrees with the rule. No I/O: the runner
 * (delivery-limit-demo.ts) fills these records in.
 */

import { versionAtLeast } from '../../broker-versions.js';
import { PROTOCOLS, type Protocol } from '../../client/protocol.js';

/** The protocols a consumer of the demo speaks; `--protocol` picks one or both. */
export { PROTOCOLS, type Protocol };
export type ProtocolChoice = Protocol | 'both';

/** What a consumer does with each delivery of the one message of a trial, by protocol, in the table's order. */
export const ACTIONS = {
  amqp091: ['ack', 'reject', 'reject-requeue', 'nack', 'nack-requeue', 'close', 'consumer-timeout'],
  amqp10: ['amqp10:accepted', 'amqp10:released', 'amqp10:rejected', 'amqp10:modified', 'amqp10:modified-failed', 'amqp10:modified-undeliverable'],
} as const satisfies Record<Protocol, readonly string[]>;
export type Action091 = (typeof ACTIONS)['amqp091'][number];
export type Action10 = (typeof ACTIONS)['amqp10'][number];
export type Action = Action091 | Action10;

/** The protocol an action is spoken in. Pure. */
export function protocolOf(action: Action): Protocol {
  return PROTOCOLS.find((p) => (ACTIONS[p] as readonly string[]).includes(action))!;
}

/** action, typed as an AMQP 0-9-1 consumer's. Pure. */
export function isAction091(action: Action): action is Action091 {
  return (ACTIONS.amqp091 as readonly string[]).includes(action);
}

/** What the demo says of each protocol's trials: the words and places that differ, declared once. */
export interface ProtocolWords {
  /** The delivery count, as a disagreement names it. */
  countName: string;
  /** Where every row's counts come from, or null when each delivery says (countFromOf). */
  countFrom: string | null;
  /** The loop rate's consumer. */
  loopConsumer: string;
  /** Where its rows start in the table's order. */
  tableOffset: number;
  /** The line under the table when the run has its rows, or null. */
  legend: string | null;
}

export const PROTOCOL_WORDS = {
  amqp091: {
    countName: 'x-delivery-count',
    countFrom: 'x-delivery-count header',
    loopConsumer: 'basic.consume with prefetch 1',
    tableOffset: 0,
    legend: null,
  },
  amqp10: {
    countName: 'delivery-count',
    countFrom: null,
    loopConsumer: 'a receiver link with credit 1',
    tableOffset: 1000,
    legend:
      "amqp10 rows: a receiver link on /queues/<queue> (credit 1, settle mode first); 'r' is the header's first-acquirer false; [n]: the x-delivery-count annotation, where it says otherwise than the header (checked against the rule).",
  },
} as const satisfies { [P in Protocol]: ProtocolWords };

/** The protocols a `--protocol` choice runs, in the table's order. Pure. */
export function protocolsOf(choice: ProtocolChoice): Protocol[] {
  return choice === 'both' ? [...PROTOCOLS] : [choice];
}

/**
 * consumer-timeout: the x-consumer-timeout of each round's consumer, in ms. rabbit_fifo arms a
 * timer for the earliest checked-out message's deadline (no periodic sweep), so the broker's
 * basic.cancel comes this long after the delivery, within a few ms.
 */
export const CONSUMER_TIMEOUT_MS = 500;

/** Where the message went in the end. */
export type Fate = 'acked' | 'still-looping' | 'dead-lettered' | 'dropped';

/**
 * How an action treats the delivery count: 'final' settles the message at once (an ack, or a
 * reject, nack or outcome that discards it); 'counts' returns it and raises the delivery count;
 * 'free' returns it without raising it; 'counts-annotation' (AMQP 1.0 before 4.3) returns it and
 * counts it toward the limit in the x-delivery-count annotation while the header's
 * delivery-count stays 0.
 */
type Effect = 'final' | 'counts' | 'free' | 'counts-annotation';

/**
 * The rule sets the demo knows: RabbitMQ 4.3's, and 4.0's (the rules before 4.3). A broker is
 * judged by the newest set not newer than it (rulesEraOf).
 */
export const RULES_ERAS = ['4.0', '4.3'] as const;
export type RulesEra = (typeof RULES_ERAS)[number];

/** The rule set a broker of `version` is judged by. Pure. */
export function rulesEraOf(version: string): RulesEra {
  return versionAtLeast(version, '4.3') ? '4.3' : '4.0';
}

/**
 * AMQP 1.0, from RabbitMQ 4.3's source: rabbit_amqp_session:settle_op_from_outcome/1 maps accepted
 * to complete, rejected to discard, released to requeue (rabbit_fifo's return with delivery_failed
 * false) and modified to {modify, DeliveryFailed, UndeliverableHere, Annotations}; rabbit_fifo's
 * apply_/3 on #modify{} discards (dead-letters, reason rejected) when undeliverable_here is true,
 * else returns, and incr_msg_headers/3 raises delivery_count only when delivery_failed is true.
 */
const EFFECT_43: Record<Action, Effect> = {
  ack: 'final',
  reject: 'final',
  'reject-requeue': 'counts',
  nack: 'final',
  'nack-requeue': 'free',
  close: 'counts',
  'consumer-timeout': 'free',
  'amqp10:accepted': 'final',
  'amqp10:released': 'free',
  'amqp10:rejected': 'final',
  'amqp10:modified': 'free',
  'amqp10:modified-failed': 'counts',
  'amqp10:modified-undeliverable': 'final',
};

/**
 * Before 4.3 the limit counted every time a message was handed out again (its acquired count):
 * any return counts, an explicit nack with requeue too, and a consumer timeout closes the channel
 * with the delivery unacked, which returns it ("Incrementing delivery count for every return as
 * we did prior to 4.3", rabbitmq-server discussion #18226; 4.3.7's release notes: closing the
 * channel on a consumer timeout "is the pre-4.3.0 behavior"). Over AMQP 1.0 a released or
 * modified message keeps delivery-count 0 in its header and carries the count in the
 * x-delivery-count annotation.
 */
const EFFECT_40: Record<Action, Effect> = {
  ...EFFECT_43,
  'nack-requeue': 'counts',
  'consumer-timeout': 'counts',
  'amqp10:released': 'counts-annotation',
  'amqp10:modified': 'counts-annotation',
};

const EFFECTS: Record<RulesEra, Record<Action, Effect>> = { '4.0': EFFECT_40, '4.3': EFFECT_43 };

/** What each action does, as RabbitMQ 4.3's docs, release notes and source say it. */
const RULES_43: Record<Action, string> = {
  ack: 'removed',
  reject: 'dead-lettered (reason rejected) with a DLX, else dropped',
  'reject-requeue': '4.3: a failed delivery; counts toward the limit (docs/4.3/nack); past it dead-lettered (delivery_limit) or dropped',
  nack: 'dead-lettered (reason rejected) with a DLX, else dropped',
  'nack-requeue': '4.3: an explicit return; never counts (rabbitmq-server #13885, 4.3.0 release notes: unlimited explicit returns)',
  close: 'counts toward the limit; past it dead-lettered (delivery_limit) or dropped',
  'consumer-timeout':
    '4.3: basic.cancel, the message returned; never counts (rabbit_fifo evaluate_consumer_timeout: returned with delivery_failed false; rabbitmq-server #18226)',
  'amqp10:accepted': 'removed (settle_op_from_outcome: accepted -> complete)',
  'amqp10:released': '4.3: requeued; never counts (settle_op_from_outcome: released -> requeue; docs/4.3/quorum-queues)',
  'amqp10:rejected': 'dead-lettered (reason rejected) with a DLX, else dropped (settle_op_from_outcome: rejected -> discard)',
  'amqp10:modified': '4.3: requeued; never counts (rabbit_fifo return without delivery-failed; docs/4.3/quorum-queues)',
  'amqp10:modified-failed': '4.3: counts toward the limit (rabbit_fifo incr_msg_headers); past it dead-lettered (delivery_limit) or dropped',
  'amqp10:modified-undeliverable': 'dead-lettered (reason rejected) with a DLX, else dropped (rabbit_fifo discard; docs/4.3/amqp)',
};

const COUNTS_40 = 'counts toward the limit; past it dead-lettered (delivery_limit) or dropped';

/** What each action did before 4.3, as the release notes and the team's own account say it (EFFECT_40). */
const RULES_40: Record<Action, string> = {
  ...RULES_43,
  'reject-requeue': `before 4.3: a return; ${COUNTS_40}`,
  'nack-requeue': `before 4.3: a return like any other; ${COUNTS_40} (rabbitmq-server discussion #18226)`,
  'consumer-timeout': `before 4.3: the channel closed (PRECONDITION_FAILED), the delivery returned; ${COUNTS_40} (4.3.7 release notes: the pre-4.3.0 behavior)`,
  'amqp10:released': `before 4.3: a return; header delivery-count stays 0, the x-delivery-count annotation ${COUNTS_40}`,
  'amqp10:modified': `before 4.3: a return; header delivery-count stays 0, the x-delivery-count annotation ${COUNTS_40}`,
  'amqp10:modified-failed': `delivery-failed raises delivery-count; ${COUNTS_40}`,
};

/** Each rule set's words, by action. */
export const RULES: Record<RulesEra, Record<Action, string>> = { '4.0': RULES_40, '4.3': RULES_43 };

/** The wait for a returned message to come back, or for a dead-lettered one to reach the DLQ, before it counts as gone. */
export const SETTLE_MS = 2_000;

export interface DeliveryLimitOptions {
  /** x-delivery-limit on every queue. */
  deliveryLimit: number;
  /** At most this many deliveries a trial. */
  rounds: number;
}

/**
 * The rounds an action's trial runs: --rounds, but a consumer timeout's at most limit + 1 (enough
 * to pass the limit were it counted; each round waits the timeout out). Pure.
 */
export function roundsOf(action: Action, o: DeliveryLimitOptions): number {
  return action === 'consumer-timeout' ? Math.min(o.rounds, o.deliveryLimit + 1) : o.rounds;
}

/** Where an AMQP 1.0 delivery's count was read: the header's delivery-count, else the x-delivery-count message annotation. */
export type CountSource = 'header' | 'annotation';

/** One delivery as basic.get (AMQP 0-9-1) or the receiver link (AMQP 1.0) returned it. */
export interface SeenDelivery {
  /** AMQP 0-9-1: the x-delivery-count header; AMQP 1.0: the header's delivery-count, else the annotation. null when absent. */
  deliveryCount: number | null;
  /** AMQP 0-9-1: the redelivered flag; AMQP 1.0: the header's first-acquirer false. */
  redelivered: boolean;
  /** AMQP 1.0 only: where deliveryCount was read; null when the broker sent neither. */
  from?: CountSource | null;
  /** AMQP 1.0 only: the x-delivery-count message annotation as sent; null when absent. */
  annotation?: number | null;
  /** consumer-timeout only: ms from the delivery to the broker's basic.cancel; null when none came. */
  cancelMs?: number | null;
}

/** What one trial saw, before it is judged. */
export interface Observed {
  deliveries: SeenDelivery[];
  acked: boolean;
  /** Messages ready in the queue after the last round. */
  leftInQueue: number;
  /** The message found in the DLQ (always false without a DLX). */
  inDlq: boolean;
  /** Its x-first-death-reason, when found in the DLQ. */
  deathReason: string | null;
}

/** What the rule predicts for a trial. */
export interface Expected {
  fate: Fate;
  deathReason: string | null;
  deliveries: number;
  /** The delivery count of each delivery (absent read as 0). */
  counts: number[];
  /** AMQP 1.0 before 4.3, a return: the x-delivery-count annotation of each delivery (absent read as 0). */
  annotationCounts?: number[];
}

/** How fast a message that never reaches the limit goes round: a push consumer doing the row's action at once on each delivery, for a window. */
export interface LoopRate {
  /** The window measured (from basic.consume or the first credit to the cancel), in ms. */
  windowMs: number;
  /** Deliveries of the one message in it. */
  deliveries: number;
  /** deliveries a second over windowMs, rounded. */
  perSec: number;
}

export interface DeliveryLimitRow extends Observed {
  action: Action;
  dlx: boolean;
  queue: string;
  fate: Fate;
  rule: string;
  expected: Expected;
  agrees: boolean;
  /** How the measured row differs from the rule; [] when it agrees. */
  disagreements: string[];
  protocol: Protocol;
  /** Which field the delivery counts were read from: `x-delivery-count header` (0-9-1), `header delivery-count` (1.0)... */
  countFrom: string;
  /** Where the row loops for ever (loopsForEver) and --loop-window is above 0: its loop's rate; else null. */
  loop: LoopRate | null;
}

/** One cluster's run, when the demo ran on several side by side (--clusters). */
export interface DeliveryLimitVersionRun {
  /** The cluster's name (as `cluster up --name` gave it). */
  cluster: string;
  brokerVersion: string;
  rulesEra: RulesEra;
  rows: DeliveryLimitRow[];
  ok: boolean;
}

export interface DeliveryLimitDemoResult extends DeliveryLimitOptions {
  /** --clusters: every cluster's run, side by side (the fields beside it are the first one's); absent for one cluster. */
  versions?: DeliveryLimitVersionRun[];
  brokerVersion: string;
  /** The rule set the rows were judged by: 4.3's, or 4.0's for a broker before 4.3. */
  rulesEra?: RulesEra;
  rows: DeliveryLimitRow[];
  ok: boolean;
  /** The protocols run (`--protocol`). */
  protocol: ProtocolChoice;
  /** --loop-window: how long each looping row's loop was measured; 0: not measured. */
  loopWindowMs: number;
  /** The x-consumer-timeout of the consumer-timeout rows' consumers, in ms. */
  consumerTimeoutMs?: number;
}

/** Whether an action's delivery settles the message (no more rounds); the same in every rule set. Pure. */
export function isFinal(action: Action): boolean {
  return EFFECT_43[action] === 'final';
}

/** Where the message went, from what the trial saw. Pure. */
export function classifyFate(o: Pick<Observed, 'acked' | 'leftInQueue' | 'inDlq'>): Fate {
  if (o.acked) return 'acked';
  if (o.leftInQueue > 0) return 'still-looping';
  return o.inDlq ? 'dead-lettered' : 'dropped';
}

/** What the rule predicts for an action, with or without a DLX, given the limit and the rounds, in a rule set (4.3's by default). Pure. */
export function expectedOf(action: Action, dlx: boolean, o: DeliveryLimitOptions, era: RulesEra = '4.3'): Expected {
  const gone = (reason: string): Pick<Expected, 'fate' | 'deathReason'> =>
    dlx ? { fate: 'dead-lettered', deathReason: reason } : { fate: 'dropped', deathReason: null };
  const effect = EFFECTS[era][action];
  switch (effect) {
    case 'final':
      return { ...(action === 'ack' || action === 'amqp10:accepted' ? { fate: 'acked', deathReason: null } : gone('rejected')), deliveries: 1, counts: [0] };
    case 'free': {
      const deliveries = roundsOf(action, o);
      return { fate: 'still-looping', deathReason: null, deliveries, counts: Array.from({ length: deliveries }, () => 0) };
    }
    case 'counts':
    case 'counts-annotation': {
      // Deliveries 0..limit carry counts 0..limit; the return of the last one passes the limit.
      const deliveries = Math.min(o.rounds, o.deliveryLimit + 1);
      const past = deliveries === o.deliveryLimit + 1;
      const counts = Array.from({ length: deliveries }, (_, i) => i);
      return {
        ...(past ? gone('delivery_limit') : { fate: 'still-looping', deathReason: null }),
        deliveries,
        // counts-annotation: the header's count stays 0; the annotation carries these.
        counts: effect === 'counts' ? counts : counts.map(() => 0),
        ...(effect === 'counts-annotation' ? { annotationCounts: counts } : {}),
      };
    }
  }
}

const SOURCE_TEXT: Record<CountSource, string> = { header: 'header delivery-count', annotation: 'x-delivery-count annotation' };

/** Which field a row's delivery counts were read from, in words. Pure. */
export function countFromOf(protocol: Protocol, deliveries: readonly SeenDelivery[]): string {
  const fixed = PROTOCOL_WORDS[protocol].countFrom;
  if (fixed !== null) return fixed;
  const sources = [...new Set(deliveries.map((d) => d.from ?? null))].map((s) => (s === null ? '(none)' : SOURCE_TEXT[s]));
  return sources.length === 0 ? '(none)' : sources.join(' / ');
}

/** AMQP 1.0: deliveries whose x-delivery-count annotation differs from the header's count. Pure. */
function annotationMismatches(deliveries: readonly SeenDelivery[]): string[] {
  return deliveries.flatMap((d, i) =>
    d.from === 'header' && d.annotation != null && d.annotation !== d.deliveryCount
      ? [`delivery ${i + 1}: x-delivery-count annotation ${d.annotation}, the header's delivery-count ${d.deliveryCount}`]
      : [],
  );
}

/** consumer-timeout: deliveries the broker never cancelled the consumer of. Pure. */
function missingCancels(deliveries: readonly SeenDelivery[]): string[] {
  return deliveries.flatMap((d, i) => (d.cancelMs === null ? [`delivery ${i + 1}: no basic.cancel from the broker`] : []));
}

/** One trial judged against its rule, in a rule set (4.3's by default). Pure. */
export function assessRow(action: Action, dlx: boolean, queue: string, seen: Observed, o: DeliveryLimitOptions, era: RulesEra = '4.3'): DeliveryLimitRow {
  const protocol = protocolOf(action);
  const expected = expectedOf(action, dlx, o, era);
  const fate = classifyFate(seen);
  const counts = seen.deliveries.map((d) => d.deliveryCount ?? 0);
  const disagreements: string[] = [];
  if (fate !== expected.fate) disagreements.push(`${fate}, the rule says ${expected.fate}`);
  if (fate === 'dead-lettered' && seen.deathReason !== expected.deathReason)
    disagreements.push(`x-first-death-reason ${seen.deathReason ?? '(none)'}, the rule says ${expected.deathReason ?? '(none)'}`);
  if (seen.deliveries.length !== expected.deliveries) disagreements.push(`${seen.deliveries.length} deliveries, the rule says ${expected.deliveries}`);
  else if (counts.join(',') !== expected.counts.join(','))
    disagreements.push(`${PROTOCOL_WORDS[protocol].countName} ${counts.join(', ')}, the rule says ${expected.counts.join(', ')}`);
  if (expected.annotationCounts) {
    const annotations = seen.deliveries.map((d) => d.annotation ?? 0);
    if (seen.deliveries.length === expected.deliveries && annotations.join(',') !== expected.annotationCounts.join(','))
      disagreements.push(`x-delivery-count annotation ${annotations.join(', ')}, the rule says ${expected.annotationCounts.join(', ')}`);
  } else disagreements.push(...annotationMismatches(seen.deliveries));
  // 4.3 cancels a timed-out consumer (basic.cancel); before it the channel was closed.
  if (era === '4.3') disagreements.push(...missingCancels(seen.deliveries));
  return {
    action,
    dlx,
    queue,
    ...seen,
    fate,
    rule: RULES[era][action],
    expected,
    agrees: disagreements.length === 0,
    disagreements,
    protocol,
    countFrom: countFromOf(protocol, seen.deliveries),
    loop: null,
  };
}

/**
 * Whether a row's message loops for ever: still in the queue after the rounds, and no delivery
 * carried a delivery count above 0, so the limit is never reached. A close is left out: its
 * loop runs at the rate a crashed consumer comes back, not the broker's; so is a consumer
 * timeout: its loop runs at the timeout's pace. Pure.
 */
export function loopsForEver(r: Pick<DeliveryLimitRow, 'action' | 'fate' | 'deliveries'>): boolean {
  return r.action !== 'close' && r.action !== 'consumer-timeout' && r.fate === 'still-looping' && r.deliveries.every((d) => (d.deliveryCount ?? 0) === 0);
}

/** A row's place in the table: without a DLX first, then the actions in ACTIONS' order. Pure. */
export function tableOrder(a: Pick<DeliveryLimitRow, 'action' | 'dlx'>, b: Pick<DeliveryLimitRow, 'action' | 'dlx'>): number {
  const at = (x: Pick<DeliveryLimitRow, 'action' | 'dlx'>): number =>
    (x.dlx ? 100 : 0) + (ACTIONS[protocolOf(x.action)] as readonly string[]).indexOf(x.action) + PROTOCOL_WORDS[protocolOf(x.action)].tableOffset;
  return at(a) - at(b);
}

/** Several clusters' results as one: the first's fields, every run in `versions`, ok when every run agrees with its own rules. Pure. */
export function sideBySideResult(runs: readonly { cluster: string; result: DeliveryLimitDemoResult }[]): DeliveryLimitDemoResult {
  const first = runs[0]!.result;
  const versions = runs.map(({ cluster, result: r }) => ({
    cluster,
    brokerVersion: r.brokerVersion,
    rulesEra: r.rulesEra ?? rulesEraOf(r.brokerVersion),
    rows: r.rows,
    ok: r.ok,
  }));
  return { ...first, versions, ok: versions.every((v) => v.ok) };
}

/** A loop's deliveries over the time they took (in whole ms, as the document carries it). Pure. */
export function loopRateOf(deliveries: number, elapsedMs: number): LoopRate {
  const windowMs = Math.round(elapsedMs);
  return { windowMs, deliveries, perSec: windowMs > 0 ? Math.round((deliveries * 1000) / windowMs) : 0 };
}
