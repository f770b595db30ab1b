import type { FailureAction } from './failure-actions.js';

/** The consumer's simulated failures (--on-failure, --fail-every, --fail-rate, --fail-first): when a delivery fails on purpose, and what that does. */

/** What each failure does to the message, for people (RabbitMQ 4.3 quorum queues). */
export const FAILURE_DESCRIPTIONS: Record<FailureAction, string> = {
  'nack-requeue': 'basic.nack requeue=true: back to the queue',
  'nack-drop': 'basic.nack requeue=false: dead-lettered (or dropped) at once',
  'reject-requeue': 'basic.reject requeue=true: back to the queue',
  'reject-drop': 'basic.reject requeue=false: dead-lettered (or dropped) at once',
  close: 'close the connection without acking: a failed delivery, counted towards delivery-limit',
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
