import type { Protocol } from './protocol.js';

/**
 * The consumer's simulated failures (--on-failure, --fail-every, --fail-rate, --fail-first), in
 * both protocols: the actions each protocol's consumer takes, what each does to the message, when
 * a delivery fails on purpose, and which protocol takes which actions. Pure. No imports but
 * types: the CLI declares --on-failure with it. What an AMQP 1.0 action settles its delivery
 * with: FAILURE_SETTLEMENTS10 in amqp10/consumer-failures10.ts.
 */

/** What the AMQP 0-9-1 consumer does with a delivery that fails on purpose (what each means: FAILURE_DESCRIPTIONS). */
export const FAILURE_ACTIONS = ['nack-requeue', 'nack-drop', 'reject-requeue', 'reject-drop', 'close'] as const;
export type FailureAction = (typeof FAILURE_ACTIONS)[number];

/**
 * What the AMQP 1.0 consumer does with a delivery that fails on purpose (--on-failure with
 * --protocol amqp10): an outcome of AMQP 1.0's, or close (what each means: FAILURE_DESCRIPTIONS10).
 */
export const FAILURE_ACTIONS10 = ['release', 'modify', 'modify-failed', 'modify-undeliverable', 'reject', 'close'] as const;
export type FailureAction10 = (typeof FAILURE_ACTIONS10)[number];

/** What each AMQP 0-9-1 failure does to the message, for people (RabbitMQ 4.3 quorum queues). */
const FAILURE_DESCRIPTIONS: Record<FailureAction, string> = {
  'nack-requeue': 'basic.nack requeue=true: back to the queue',
  'nack-drop': 'basic.nack requeue=false: dead-lettered (or dropped) at once',
  'reject-requeue': 'basic.reject requeue=true: back to the queue',
  'reject-drop': 'basic.reject requeue=false: dead-lettered (or dropped) at once',
  close: 'close the connection without acking: a failed delivery, counted towards delivery-limit',
};

/** What each AMQP 1.0 failure does to the message, for people (RabbitMQ 4.3 quorum queues, rabbit_fifo). */
const FAILURE_DESCRIPTIONS10: Readonly<Record<FailureAction10, string>> = {
  release: 'released: back to the queue; not a failed delivery (delivery_count unchanged, x-acquired-count + 1)',
  modify: 'modified: back to the queue, as released (delivery_count unchanged)',
  'modify-failed': 'modified delivery_failed=true: back to the queue, delivery_count + 1 (counted towards delivery-limit)',
  'modify-undeliverable': 'modified undeliverable_here=true: dead-lettered (or dropped) at once',
  reject: 'rejected: dead-lettered (or dropped) at once',
  close: 'close the connection with the delivery unsettled: back to the queue, a failed delivery (counted towards delivery-limit)',
};

/** When deliveries fail on purpose, and how (A: AMQP 0-9-1's actions, or AMQP 1.0's: FailureAction10). */
export interface FailureSpec<A extends string = FailureAction> {
  action: A;
  every: number | undefined;
  rate: number | undefined;
  first?: number | undefined;
}

/** Whether the n-th delivery (1-based) should fail. Pure. */
export function shouldFail(n: number, failure: FailureSpec<string> | undefined, random: () => number): boolean {
  if (!failure) return false;
  if (failure.first !== undefined) return n <= failure.first;
  if (failure.every !== undefined) return n % failure.every === 0;
  if (failure.rate !== undefined) return random() < failure.rate;
  return true;
}

/** The --on-failure actions a protocol takes. */
const FAILURE_ACTIONS_BY_PROTOCOL: Readonly<Record<Protocol, readonly string[]>> = {
  amqp091: FAILURE_ACTIONS,
  amqp10: FAILURE_ACTIONS10,
};

/** Every --on-failure action of either protocol, each once (close is both's). */
export const ALL_FAILURE_ACTIONS: readonly (FailureAction | FailureAction10)[] = [...new Set([...FAILURE_ACTIONS, ...FAILURE_ACTIONS10])];

/** Why `action` is refused with `protocol` (one line), or undefined when the protocol takes it. */
export function failureActionRefusal(protocol: Protocol, action: string): string | undefined {
  const own = FAILURE_ACTIONS_BY_PROTOCOL[protocol];
  if (own.includes(action)) return undefined;
  const other = protocol === 'amqp10' ? 'amqp091' : 'amqp10';
  const whose = FAILURE_ACTIONS_BY_PROTOCOL[other].includes(action) ? ` is --protocol ${other}'s` : ' is not an action';
  return `--on-failure ${action}${whose}; with --protocol ${protocol}: ${own.join(', ')}`;
}

/** action, typed as an AMQP 1.0 action (the CLI has refused the others). */
export function isFailureAction10(action: string): action is FailureAction10 {
  return (FAILURE_ACTIONS10 as readonly string[]).includes(action);
}

/** action, typed as an AMQP 0-9-1 action. */
export function isFailureAction091(action: string): action is FailureAction {
  return (FAILURE_ACTIONS as readonly string[]).includes(action);
}

/** What `action` does, for people, in `protocol`'s terms. */
export function failureDescription(protocol: Protocol, action: FailureAction | FailureAction10): string {
  if (protocol === 'amqp10' && isFailureAction10(action)) return FAILURE_DESCRIPTIONS10[action];
  return isFailureAction091(action) ? FAILURE_DESCRIPTIONS[action] : FAILURE_DESCRIPTIONS10[action];
}
