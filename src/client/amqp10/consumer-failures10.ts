import type { FailureAction10 } from '../consumer-failures.js';

/**
 * The AMQP 1.0 consumer's simulated failures: what each --on-failure action settles a delivery
 * with (the actions, and what each does to the message: consumer-failures.ts). Pure.
 */

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
