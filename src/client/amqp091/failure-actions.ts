/** What the consumer does with a delivery that fails (what each means: FAILURE_DESCRIPTIONS in consumer-failures.ts). No imports: the CLI declares --on-failure with it. */
export const FAILURE_ACTIONS = ['nack-requeue', 'nack-drop', 'reject-requeue', 'reject-drop', 'close'] as const;
export type FailureAction = (typeof FAILURE_ACTIONS)[number];
