import { FAILURE_DESCRIPTIONS } from '../amqp091/consumer-failures.js';
import { FAILURE_ACTIONS, type FailureAction } from '../amqp091/failure-actions.js';
import { FAILURE_ACTIONS10, type FailureAction10 } from './failure-actions10.js';
import type { Protocol } from '../protocol.js';

/**
 * The AMQP 1.0 consumer's simulated failures: what each --on-failure action settles a delivery
 * with, and which protocol takes which actions. Pure.
 */

/** What each failure does to the message, for people (RabbitMQ 4.3 quorum queues, rabbit_fifo). */
const FAILURE_DESCRIPTIONS10: Readonly<Record<FailureAction10, string>> = {
  release: 'released: back to the queue; not a failed delivery (delivery_count unchanged, x-acquired-count + 1)',
  modify: 'modified: back to the queue, as released (delivery_count unchanged)',
  'modify-failed': 'modified delivery_failed=true: back to the queue, delivery_count + 1 (counted towards delivery-limit)',
  'modify-undeliverable': 'modified undeliverable_here=true: dead-lettered (or dropped) at once',
  reject: 'rejected: dead-lettered (or dropped) at once',
  close: 'close the connection with the delivery unsettled: back to the queue, a failed delivery (counted towards delivery-limit)',
};

/** The outcome a failure settles its delivery with, and the result's counter it goes to. */
export interface Settlement10 {
  /** null: not settled (close: the connection goes with the delivery unsettled). */
  outcome: 'released' | 'modified' | 'rejected' | null;
  /** The modified outcome's fields (false for the other outcomes). */
  deliveryFailed: boolean;
  undeliverableHere: boolean;
  /** ConsumerResult's counter: released and modified count as nacked, rejected as rejected (see consumer10.ts). */
  counter: 'nacked' | 'rejected' | null;
}

export const FAILURE_SETTLEMENTS10: Readonly<Record<FailureAction10, Settlement10>> = {
  release: { outcome: 'released', deliveryFailed: false, undeliverableHere: false, counter: 'nacked' },
  modify: { outcome: 'modified', deliveryFailed: false, undeliverableHere: false, counter: 'nacked' },
  'modify-failed': { outcome: 'modified', deliveryFailed: true, undeliverableHere: false, counter: 'nacked' },
  'modify-undeliverable': { outcome: 'modified', deliveryFailed: false, undeliverableHere: true, counter: 'nacked' },
  reject: { outcome: 'rejected', deliveryFailed: false, undeliverableHere: false, counter: 'rejected' },
  close: { outcome: null, deliveryFailed: false, undeliverableHere: false, counter: null },
};

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
