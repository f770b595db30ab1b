/**
 * delivery-limit-demo, the pure part: the AMQP 0-9-1 consumer actions, the rule RabbitMQ 4.3
 * documents for each, what one trial saw, its fate, and whether it agrees with the rule.
 * No I/O: the runner (delivery-limit-demo.ts) fills these records in.
 */

/** What a consumer does with each delivery of the one message of a trial. */
export const ACTIONS = ['ack', 'reject', 'reject-requeue', 'nack', 'nack-requeue', 'close'] as const;
export type Action = (typeof ACTIONS)[number];

/** Where the message went in the end. */
export type Fate = 'acked' | 'still-looping' | 'dead-lettered' | 'dropped';

/**
 * How an action treats the delivery count: 'final' settles the message at once (ack, or a reject
 * or nack without requeue); 'counts' returns it and raises x-delivery-count; 'free' returns it
 * without raising it.
 */
type Effect = 'final' | 'counts' | 'free';

const EFFECT: Record<Action, Effect> = {
  ack: 'final',
  reject: 'final',
  'reject-requeue': 'counts',
  nack: 'final',
  'nack-requeue': 'free',
  close: 'counts',
};

/** What each action does, as RabbitMQ 4.3's docs and release notes say it. */
export const RULES: Record<Action, string> = {
  ack: 'removed',
  reject: 'dead-lettered (reason rejected) with a DLX, else dropped',
  'reject-requeue': '4.3: a failed delivery; counts toward the limit (docs/4.3/nack); past it dead-lettered (delivery_limit) or dropped',
  nack: 'dead-lettered (reason rejected) with a DLX, else dropped',
  'nack-requeue': '4.3: an explicit return; never counts (rabbitmq-server #13885, 4.3.0 release notes: unlimited explicit returns)',
  close: 'counts toward the limit; past it dead-lettered (delivery_limit) or dropped',
};

/** The wait for a returned message to come back, or for a dead-lettered one to reach the DLQ, before it counts as gone. */
export const SETTLE_MS = 2_000;

export interface DeliveryLimitOptions {
  /** x-delivery-limit on every queue. */
  deliveryLimit: number;
  /** At most this many deliveries a trial. */
  rounds: number;
}

/** One delivery as basic.get returned it. */
export interface SeenDelivery {
  /** x-delivery-count; null when the header is absent. */
  deliveryCount: number | null;
  redelivered: boolean;
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
  /** x-delivery-count of each delivery (absent read as 0). */
  counts: number[];
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
}

export interface DeliveryLimitDemoResult extends DeliveryLimitOptions {
  brokerVersion: string;
  rows: DeliveryLimitRow[];
  ok: boolean;
}

/** Whether an action's delivery settles the message (no more rounds). Pure. */
export function isFinal(action: Action): boolean {
  return EFFECT[action] === 'final';
}

/** Where the message went, from what the trial saw. Pure. */
export function classifyFate(o: Pick<Observed, 'acked' | 'leftInQueue' | 'inDlq'>): Fate {
  if (o.acked) return 'acked';
  if (o.leftInQueue > 0) return 'still-looping';
  return o.inDlq ? 'dead-lettered' : 'dropped';
}

/** What the rule predicts for an action, with or without a DLX, given the limit and the rounds. Pure. */
export function expectedOf(action: Action, dlx: boolean, o: DeliveryLimitOptions): Expected {
  const gone = (reason: string): Pick<Expected, 'fate' | 'deathReason'> =>
    dlx ? { fate: 'dead-lettered', deathReason: reason } : { fate: 'dropped', deathReason: null };
  switch (EFFECT[action]) {
    case 'final':
      return { ...(action === 'ack' ? { fate: 'acked', deathReason: null } : gone('rejected')), deliveries: 1, counts: [0] };
    case 'free':
      return { fate: 'still-looping', deathReason: null, deliveries: o.rounds, counts: Array.from({ length: o.rounds }, () => 0) };
    case 'counts': {
      // Deliveries 0..limit carry counts 0..limit; the return of the last one passes the limit.
      const deliveries = Math.min(o.rounds, o.deliveryLimit + 1);
      const past = deliveries === o.deliveryLimit + 1;
      return {
        ...(past ? gone('delivery_limit') : { fate: 'still-looping', deathReason: null }),
        deliveries,
        counts: Array.from({ length: deliveries }, (_, i) => i),
      };
    }
  }
}

/** One trial judged against its rule. Pure. */
export function assessRow(action: Action, dlx: boolean, queue: string, seen: Observed, o: DeliveryLimitOptions): DeliveryLimitRow {
  const expected = expectedOf(action, dlx, o);
  const fate = classifyFate(seen);
  const counts = seen.deliveries.map((d) => d.deliveryCount ?? 0);
  const disagreements: string[] = [];
  if (fate !== expected.fate) disagreements.push(`${fate}, the rule says ${expected.fate}`);
  if (fate === 'dead-lettered' && seen.deathReason !== expected.deathReason)
    disagreements.push(`x-first-death-reason ${seen.deathReason ?? '(none)'}, the rule says ${expected.deathReason ?? '(none)'}`);
  if (seen.deliveries.length !== expected.deliveries) disagreements.push(`${seen.deliveries.length} deliveries, the rule says ${expected.deliveries}`);
  else if (counts.join(',') !== expected.counts.join(','))
    disagreements.push(`x-delivery-count ${counts.join(', ')}, the rule says ${expected.counts.join(', ')}`);
  return { action, dlx, queue, ...seen, fate, rule: RULES[action], expected, agrees: disagreements.length === 0, disagreements };
}
