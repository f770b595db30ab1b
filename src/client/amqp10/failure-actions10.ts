/**
 * What the AMQP 1.0 consumer does with a delivery that fails on purpose (--on-failure with
 * --protocol amqp10): an outcome of AMQP 1.0's, or close (what each means: FAILURE_DESCRIPTIONS10
 * in consumer-failures10.ts). FAILURE_ACTIONS (src/client/amqp091/failure-actions.ts) are AMQP 0-9-1's.
 * No imports: the CLI declares --on-failure with it.
 */
export const FAILURE_ACTIONS10 = ['release', 'modify', 'modify-failed', 'modify-undeliverable', 'reject', 'close'] as const;
export type FailureAction10 = (typeof FAILURE_ACTIONS10)[number];
